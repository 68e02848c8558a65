/**
 * Catalog lookups kept by name (pricing/catalog.ts): only an answer that is the same at any date
 * is kept, so a model whose catalog prices change with the date or the time of day is still
 * priced as of each session's own time.
 */
import { describe, expect, it } from 'vitest';
import { lookupModel } from '../../src/pricing/catalog.js';

describe('catalog lookups by name', () => {
  it('looks a model with one price list for all time up once', async () => {
    const first = await lookupModel('claude-sonnet-4-5-20250929', new Date('2025-10-01T03:00:00Z'));
    const later = await lookupModel('claude-sonnet-4-5-20250929', new Date('2026-02-01T18:00:00Z'));
    expect(first?.id).toBe('claude-sonnet-4-5');
    expect(later).toBe(first);
  });

  it('prices a model whose prices depend on the time as of each time asked', async () => {
    // DeepSeek lists off-peak prices (16:30 to 00:30 UTC): the first lookup must not answer the second.
    const peak = await lookupModel('deepseek-chat', new Date('2025-10-01T03:00:00Z'));
    const offPeak = await lookupModel('deepseek-chat', new Date('2025-10-01T18:00:00Z'));
    const peakAgain = await lookupModel('deepseek-chat', new Date('2025-10-02T03:00:00Z'));
    expect(offPeak!.rates.input.base).toBeLessThan(peak!.rates.input.base);
    expect(peakAgain!.rates.input.base).toBe(peak!.rates.input.base);
  });

  it('finds a model the provider serves only as a preview under the name an agent records without the suffix', async () => {
    // Gemini CLI records gemini-3-pro; Google bills it as gemini-3-pro-preview ($2 in, $12 out, $0.20 cached per million).
    const model = await lookupModel('gemini-3-pro', new Date('2026-01-16T11:00:00Z'));
    expect(model).toMatchObject({ id: 'gemini-3-pro-preview', provider: 'google' });
    expect([model!.rates.input.base, model!.rates.output.base, model!.rates.cacheRead.base]).toEqual([2, 12, 0.2]);
    expect(await lookupModel('gemini-3-pro-preview')).toMatchObject({ id: 'gemini-3-pro-preview' });
  });

  it('answers null again for a name the catalog does not know', async () => {
    expect(await lookupModel('<synthetic>', new Date('2025-10-01T03:00:00Z'))).toBeNull();
    expect(await lookupModel('<synthetic>', new Date('2025-10-01T18:00:00Z'))).toBeNull();
  });
});
