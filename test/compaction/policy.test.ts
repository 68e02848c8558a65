import { describe, expect, it } from 'vitest';
import { compactionPays, DEFAULT_POLICY, emergencyPolicy, shouldCompact, tokensOverTrigger, triggerCeiling, triggerThreshold } from '../../src/compaction/policy.js';

describe('shouldCompact', () => {
  it('leaves a small session alone', () => {
    expect(shouldCompact(5_000, DEFAULT_POLICY)).toBe(false);
  });

  it('triggers above limit - reserve', () => {
    expect(triggerThreshold(DEFAULT_POLICY)).toBe(98_000);
    expect(shouldCompact(98_000, DEFAULT_POLICY)).toBe(false);
    expect(shouldCompact(98_001, DEFAULT_POLICY)).toBe(true);
  });

  it('treats a reserve at or above the limit as "always compact"', () => {
    const policy = { ...DEFAULT_POLICY, contextLimit: 10_000, trigger: { kind: 'reserve', tokens: 10_000 } as const };
    expect(shouldCompact(0, policy)).toBe(true);
  });

  it('triggers at a percentage of the window when asked (>= 80%)', () => {
    const policy = { ...DEFAULT_POLICY, contextLimit: 100_000, trigger: { kind: 'percent', percent: 80 } as const };
    expect(shouldCompact(79_999, policy)).toBe(false);
    expect(shouldCompact(80_000, policy)).toBe(true);
  });

  it('always compacts under --force', () => {
    expect(shouldCompact(0, { ...DEFAULT_POLICY, force: true })).toBe(true);
  });

  it('derives the emergency policy from the window (keep = limit / 5, forced)', () => {
    const emergency = emergencyPolicy({ ...DEFAULT_POLICY, contextLimit: 80_000 });
    expect(emergency.keepRecentTokens).toBe(16_000);
    expect(emergency.force).toBe(true);
    // What it must reach is the window itself.
    expect(triggerCeiling(emergency)).toBe(80_000);
  });
});

describe('the guards: under the trigger, and paying', () => {
  it('knows the largest context under the trigger, for either kind of trigger', () => {
    expect(triggerCeiling(DEFAULT_POLICY)).toBe(98_000);
    expect(triggerCeiling({ ...DEFAULT_POLICY, contextLimit: 100_000, trigger: { kind: 'percent', percent: 80 } })).toBe(79_999);
    // A reserve at the limit compacts always: nothing is ever under it.
    expect(triggerCeiling({ ...DEFAULT_POLICY, contextLimit: 10_000, trigger: { kind: 'reserve', tokens: 10_000 } })).toBeNull();
  });

  it('asks a compaction over the trigger to take off what exceeds it, unless thrash is allowed', () => {
    expect(tokensOverTrigger(98_000, DEFAULT_POLICY)).toBe(0);
    expect(tokensOverTrigger(100_000, DEFAULT_POLICY)).toBe(2_000);
    expect(tokensOverTrigger(100_000, { ...DEFAULT_POLICY, allowThrash: true })).toBe(0);
  });

  it('counts a compaction as paying when it takes at least 1% of the context off', () => {
    expect(compactionPays(53_412, 53_404)).toBe(false);
    expect(compactionPays(1_380, 1_391)).toBe(false);
    expect(compactionPays(10_000, 9_900)).toBe(true);
    expect(compactionPays(10_000, 9_901)).toBe(false);
    expect(compactionPays(0, 0)).toBe(false);
  });
});
