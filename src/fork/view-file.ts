/**
 * Forks of plain message logs (canonical, OpenAI chat, Anthropic messages): the provider view
 * itself, one message a line in the session's own format, beside the original as
 * `<name>-fork-<uuid>.jsonl`. No agent resumes these; a harness sends the messages.
 */
import { randomUUID } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { toCanonicalRecord } from '../formats/canonical.js';
import { anthropicRequest, openAiChatRequest } from '../session/request-body.js';
import type { Message } from '../session/model.js';
import type { ForkFile, ForkOptions, ForkSource, ForkWriter } from './source.js';
import { compactionTokens } from './source.js';

function viewFork(records: (view: readonly Message[], model: string) => readonly unknown[]): ForkWriter {
  return (source: ForkSource, options: ForkOptions): ForkFile => {
    const sessionId = randomUUID();
    const stem = basename(source.path).replace(/\.jsonl$/, '');
    const model = source.session.model ?? 'unknown';
    return {
      path: join(options.outDir ?? dirname(source.path), `${stem}-fork-${sessionId}.jsonl`),
      sessionId,
      text: records(source.view, model)
        .map((record) => `${JSON.stringify(record)}\n`)
        .join(''),
      resume: null,
      tokens: compactionTokens(source),
    };
  };
}

export const canonicalFork = viewFork((view) => view.map(toCanonicalRecord));
export const openAiChatFork = viewFork((view, model) => openAiChatRequest(view, { model }).messages as unknown[]);
export const anthropicMessagesFork = viewFork((view, model) => {
  const body = anthropicRequest(view, { model, thinking: true });
  return [...(typeof body['system'] === 'string' ? [{ system: body['system'] }] : []), ...(body['messages'] as unknown[])];
});
