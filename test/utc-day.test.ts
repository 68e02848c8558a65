/**
 * DayReader (src/ledgers/rollup.ts) parses a timestamp once for a run of UTC instants of the
 * same date (of the same minute, in another zone): whatever the order they come in, each day must
 * be the one the Date parser gives, and utcDay's, which reads one timestamp.
 */
import { describe, expect, it } from 'vitest';
import { DayReader, utcDay } from '../src/ledgers/rollup.js';

/** The day as the parser alone gives it. */
function parsedDay(timestamp: string): string | null {
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? null : new Date(time).toISOString().slice(0, 10);
}

/** The day in Paris as the parser and Intl alone give it. */
function parisDay(timestamp: string): string | null {
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? null : new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit' }).format(time);
}

const TIMESTAMPS = [
  '2025-09-01T09:00:28.619Z',
  '2025-09-01T23:59:59.999Z',
  '2025-09-01T00:00:00Z',
  '2025-09-01T24:00:00Z',
  '2025-09-01T23:59:60Z',
  '2025-09-01T23:59:59.9999Z',
  '2025-09-01T10:00:00+02:00',
  '2025-09-01T01:00:00-03:00',
  '2025-09-01',
  '2025-09-01T09:00:28.619',
  '2025-02-29T12:00:00.000Z',
  '2025-02-30T00:00:00.000Z',
  '2025-02-30T23:59:59.999Z',
  '2024-02-29T23:59:59.999Z',
  '2025-13-01T00:00:00.000Z',
  '2025-09-32T00:00:00.000Z',
  '2025-09-01T09:00:28.619Zjunk',
  'Mon, 01 Sep 2025 09:00:00 GMT',
  'not a date',
  '',
];

describe('utcDay', () => {
  it('gives the parser’s day for every timestamp, in any order after any other', () => {
    for (const first of TIMESTAMPS) {
      for (const second of TIMESTAMPS) {
        // One reader for the run, as a session's spend keeps one: what it holds from a read must not change the next.
        const days = new DayReader();
        const paris = new DayReader('Europe/Paris');
        for (const timestamp of [first, second, first]) {
          expect(days.day(timestamp), `${first} then ${second}`).toBe(parsedDay(timestamp));
          expect(paris.day(timestamp), `Paris: ${first} then ${second}`).toBe(parisDay(timestamp));
          expect(utcDay(timestamp), timestamp).toBe(parsedDay(timestamp));
        }
      }
    }
  });

  it('is null for no timestamp', () => {
    expect(utcDay(null)).toBeNull();
    expect(utcDay(undefined)).toBeNull();
  });
});
