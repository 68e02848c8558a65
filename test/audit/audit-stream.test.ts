/**
 * `audit` without `--strategy` in two reads (src/pipeline/audit-session.ts, src/audit/streamed.ts):
 * the audits taken as the messages go by are those of the whole session read in full
 * (auditSidecar, auditRecorded), on every fixture with and without a truncate sidecar.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRecorded, auditSidecar } from '../../src/audit/compactions.js';
import { auditInTwoReads } from '../../src/pipeline/audit-session.js';
import { sessionInput } from '../../src/read/index.js';
import { fixturesWithTruncateSidecars, sessionFilesUnder } from '../helpers/session-files.js';
import { loadHeld } from '../helpers/held-read.js';


describe('audit in two reads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fixturesWithTruncateSidecars('compactor-audit-stream-');
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('gives the audits of the session read in full, on every fixture', async () => {
    let streamed = 0;
    let withSidecar = 0;
    let withRecorded = 0;
    for (const path of sessionFilesUnder(dir)) {
      const whole = await loadHeld(path, { format: 'auto' }).then(
        (loaded) => {
          const previous = loaded.subject.previous;
          const audits = [
            ...(previous ? [auditSidecar(loaded.session.messages, previous.state, previous.firstKeptIndex)] : []),
            ...auditRecorded(loaded.session),
          ];
          return { audits, messages: loaded.session.messages.length, warnings: loaded.warnings };
        },
        (error: unknown) => String(error),
      );
      const two = await auditInTwoReads(sessionInput(path), 'auto', 0).then(
        (result) => result && { audits: result.audits, messages: result.loaded.session.messages.length, warnings: result.loaded.warnings },
        (error: unknown) => String(error),
      );
      if (two === null) continue;
      expect(two, path).toEqual(whole);
      streamed++;
      if (typeof two !== 'string') {
        if (two.audits.some((audit) => audit.source === 'sidecar')) withSidecar++;
        if (two.audits.some((audit) => audit.source === 'recorded')) withRecorded++;
      }
    }
    expect(streamed).toBeGreaterThan(60);
    expect(withSidecar).toBeGreaterThan(20);
    expect(withRecorded).toBeGreaterThan(2);
  }, 300_000);
});
