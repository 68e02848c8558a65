import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, emergencyPolicy, shouldCompact, triggerThreshold } from '../src/compaction/policy.js';

describe('shouldCompact', () => {
  it('leaves a small session alone (seed 004: small_session_no_compaction)', () => {
    expect(shouldCompact(5_000, DEFAULT_POLICY)).toBe(false);
  });

  it('triggers above limit - reserve (seed 004: large_session_triggers_compaction)', () => {
    expect(triggerThreshold(DEFAULT_POLICY)).toBe(98_000);
    expect(shouldCompact(98_000, DEFAULT_POLICY)).toBe(false);
    expect(shouldCompact(98_001, DEFAULT_POLICY)).toBe(true);
  });

  it('treats a reserve at or above the limit as "always compact"', () => {
    const policy = { ...DEFAULT_POLICY, contextLimit: 10_000, trigger: { kind: 'reserve', tokens: 10_000 } as const };
    expect(shouldCompact(0, policy)).toBe(true);
  });

  it('triggers at a percentage of the window when asked (seed 000: >= 80%)', () => {
    const policy = { ...DEFAULT_POLICY, contextLimit: 100_000, trigger: { kind: 'percent', percent: 80 } as const };
    expect(shouldCompact(79_999, policy)).toBe(false);
    expect(shouldCompact(80_000, policy)).toBe(true);
  });

  it('always compacts under --force', () => {
    expect(shouldCompact(0, { ...DEFAULT_POLICY, force: true })).toBe(true);
  });

  it('derives the emergency policy from the window (seed 000: keep = limit / 5, forced)', () => {
    const emergency = emergencyPolicy({ ...DEFAULT_POLICY, contextLimit: 80_000 });
    expect(emergency.keepRecentTokens).toBe(16_000);
    expect(emergency.force).toBe(true);
  });
});
