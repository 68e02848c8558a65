/**
 * Reading session files the plain way: usage counted straight from each file's JSON lines (every
 * line JSON.parse'd, one entry per billed response, deduplicated by the provider's billing key),
 * by rules written here and nowhere else, so they check our readers rather than repeat them.
 * For the files the real agents wrote (fixtures/agents/, or a run in a test), for the real
 * sessions under fixtures/real/ (Claude Code, Codex, pi, Gemini CLI), and for a session with the
 * files its agent wrote beside it (`spendByHand`). Also the expected spend of each agent fixture,
 * from its manifest, for the spend-ledger tests.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FIXTURES } from './cli.js';

export const AGENT_FIXTURES = join(FIXTURES, 'agents');

/** One billed call's usage, in the package's terms (`input` excludes cached tokens). */
export interface CallUsage {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly cacheWrite1h: number;
  readonly output: number;
}

/** What a spend ledger over a file must report: the calls it recorded, summed. */
export interface Spend extends CallUsage {
  readonly requests: number;
  /** Everything the provider read: input + cacheRead + cacheWrite (input "including cached"). */
  readonly prompt: number;
}

export type AgentName = 'claude-code' | 'codex' | 'pi';
/** The agents whose session files are counted here: the three that ran here, and Gemini CLI (real files only). */
export type SessionAgent = AgentName | 'gemini-cli';

export interface ManifestCall {
  readonly n: number;
  /** The script step that answered it (Manifest.script), or null for a side request. */
  readonly step: number | null;
  readonly label: string | null;
  readonly kind: string | null;
  readonly responseId: string;
  readonly usage: { input: number; cacheRead: number; cacheWrite5m: number; cacheWrite1h: number; output: number; reasoning: number } | null;
  readonly hung: boolean;
  readonly billedIn: string | null;
  readonly copiedTo: readonly string[];
}

export interface Manifest {
  readonly agent: AgentName;
  readonly package: string;
  readonly version: string;
  readonly scenario: string;
  readonly commands: readonly { command: string }[];
  /** What the provider answered, step by step: the reply's text and tool calls. */
  readonly script: readonly { readonly text?: string; readonly toolCalls?: readonly { readonly name: string; readonly input?: unknown }[] }[];
  readonly calls: readonly ManifestCall[];
  readonly files: readonly { path: string; structures: readonly string[] }[];
  readonly expectedSpend: Record<string, Omit<Spend, 'prompt'>>;
}

export interface AgentFixture {
  /** `<agent>/<scenario>`. */
  readonly name: string;
  readonly dir: string;
  readonly manifest: Manifest;
}

/** Every fixtures/agents/<agent>/<scenario>/manifest.json. */
export function agentFixtures(): AgentFixture[] {
  const out: AgentFixture[] = [];
  for (const agent of readdirSync(AGENT_FIXTURES, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const scenario of readdirSync(join(AGENT_FIXTURES, agent.name), { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      const dir = join(AGENT_FIXTURES, agent.name, scenario.name);
      out.push({ name: `${agent.name}/${scenario.name}`, dir, manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** A manifest call's scripted usage in CallUsage terms (null: the provider reported none). */
export function callUsage(call: Pick<ManifestCall, 'usage'>): CallUsage | null {
  if (!call.usage) return null;
  const { input, cacheRead, cacheWrite5m, cacheWrite1h, output } = call.usage;
  return { input, cacheRead, cacheWrite: cacheWrite5m + cacheWrite1h, cacheWrite1h, output };
}

const ZERO: Spend = { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0, prompt: 0 };

function add(total: Spend, usage: CallUsage): Spend {
  return {
    requests: total.requests + 1,
    input: total.input + usage.input,
    cacheRead: total.cacheRead + usage.cacheRead,
    cacheWrite: total.cacheWrite + usage.cacheWrite,
    cacheWrite1h: total.cacheWrite1h + usage.cacheWrite1h,
    output: total.output + usage.output,
    prompt: total.prompt + usage.input + usage.cacheRead + usage.cacheWrite,
  };
}

/**
 * The spend each session file of a fixture must be charged with: the calls the provider billed
 * while that session ran (the file recorded them), summed. A fork's copies of earlier calls are
 * NOT in its spend (they were billed in the parent), and calls no file recorded (compaction
 * summaries, replies cut before any usage) are under `notRecorded`.
 */
export function expectedSpend(manifest: Pick<Manifest, 'calls' | 'files'>): { perFile: Record<string, Spend>; notRecorded: Spend } {
  const perFile: Record<string, Spend> = {};
  for (const file of manifest.files) if (file.path.endsWith('.jsonl')) perFile[file.path] = ZERO;
  let notRecorded = ZERO;
  for (const call of manifest.calls) {
    const usage = callUsage(call);
    if (!usage) continue;
    if (call.billedIn === null) notRecorded = add(notRecorded, usage);
    else perFile[call.billedIn] = add(perFile[call.billedIn] ?? ZERO, usage);
  }
  return { perFile, notRecorded };
}

const jsonLines = (text: string): any[] =>
  text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

const isZero = (usage: CallUsage) => usage.input + usage.cacheRead + usage.cacheWrite + usage.output === 0;

/**
 * Claude Code: one response is one line per content block, all with the same `message.id`;
 * input and cache figures repeat on each, `output_tokens` is final on the line with a
 * `stop_reason`, else the largest partial. Lines made up locally (model `<synthetic>`) were never
 * billed, and lines copied from another session when a conversation was branched (`forkedFrom`)
 * were billed there.
 */
function claudeUsage(lines: any[]): Map<string, CallUsage> {
  const byId = new Map<string, CallUsage & { final: boolean }>();
  for (const line of lines) {
    const message = line.type === 'assistant' ? line.message : undefined;
    if (!message?.usage || !message.id || message.model === '<synthetic>' || line.forkedFrom) continue;
    const usage = message.usage;
    const oneHour = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
    const final = message.stop_reason !== null && message.stop_reason !== undefined;
    const here = {
      input: usage.input_tokens ?? 0,
      cacheRead: usage.cache_read_input_tokens ?? 0,
      cacheWrite: usage.cache_creation_input_tokens ?? 0,
      cacheWrite1h: oneHour,
      output: usage.output_tokens ?? 0,
      final,
    };
    const seen = byId.get(message.id);
    if (seen && (seen.input !== here.input || seen.cacheRead !== here.cacheRead || seen.cacheWrite !== here.cacheWrite)) {
      throw new Error(`message ${message.id}: input or cache figures differ between its lines`);
    }
    if (!seen || (!seen.final && (final || here.output > seen.output))) byId.set(message.id, here);
  }
  return new Map([...byId].map(([id, { final: _final, ...usage }]) => [id, usage]));
}

/** A Codex `last_token_usage` or record usage: `input_tokens` holds the cached part and the part written to the cache. */
function codexCall(usage: any): CallUsage {
  const cacheRead = usage.cached_input_tokens ?? 0;
  const cacheWrite = usage.cache_write_input_tokens ?? 0;
  return { input: usage.input_tokens - cacheRead - cacheWrite, cacheRead, cacheWrite, cacheWrite1h: 0, output: usage.output_tokens };
}

/** A line as Codex wrote it, but for its time: what a fork's copy of its parent keeps. */
const untimed = (line: any): string => JSON.stringify({ ...line, timestamp: undefined });

/**
 * The lines of a forked rollout (its first line's `forked_from_id`) that copy its parent's: Codex
 * before 0.148 writes the parent's lines, restamped, right after the fork's own first line. They
 * are found by comparing with the parent's rollout beside it (the rollout whose first line has
 * that id); without it, none are known.
 */
function copiedFromParent(lines: any[], path: string | undefined): number {
  const parent = lines[0]?.type === 'session_meta' ? lines[0].payload?.forked_from_id : undefined;
  if (!parent || !path) return 0;
  for (const name of readdirSync(dirname(path))) {
    const other = join(dirname(path), name);
    if (other === path || !name.endsWith('.jsonl')) continue;
    const theirs = jsonLines(readFileSync(other, 'utf8'));
    if (theirs[0]?.type !== 'session_meta' || theirs[0].payload?.id !== parent) continue;
    let copied = 0;
    while (copied < theirs.length && 1 + copied < lines.length && untimed(theirs[copied]) === untimed(lines[1 + copied])) copied++;
    return copied;
  }
  return 0;
}

/**
 * Codex 0.153 on: a `token_usage_record` per response (`response_id`, `usage` with input
 * INCLUDING the cached part). The `token_count` events must tell the same story: each change of
 * the running total adds exactly that response's usage. Older versions write only the
 * `token_count` events: each change of the running total is one call (a review inside the
 * rollout restarts the totals: they change all the same). A fork's copy of its parent's lines
 * (copiedFromParent) was billed in the parent: its totals are the parent's, its calls none here.
 */
function codexUsage(all: any[], path: string | undefined): Map<string, CallUsage> {
  const copied = copiedFromParent(all, path);
  const lines = copied > 0 ? [all[0], ...all.slice(1 + copied)] : all;
  const byId = new Map<string, CallUsage>();
  const records: any[] = [];
  for (const line of lines) {
    if (line.type !== 'token_usage_record') continue;
    const usage = line.payload.usage;
    records.push(usage);
    byId.set(line.payload.response_id, codexCall(usage));
  }
  const steps: any[] = [];
  // A fork's totals go on from where the copied ones left them.
  let total = copied > 0 ? lastTotal(all.slice(1, 1 + copied)) : '';
  for (const line of lines) {
    const info = line.type === 'event_msg' && line.payload?.type === 'token_count' ? line.payload.info : null;
    if (!info?.last_token_usage) continue;
    const now = JSON.stringify(info.total_token_usage);
    if (now !== total) steps.push(info.last_token_usage);
    total = now;
  }
  if (records.length === 0) return new Map(steps.map((step, index) => [`token_count ${index}`, codexCall(step)]));
  const same = (a: any, b: any) => a.input_tokens === b.input_tokens && a.cached_input_tokens === b.cached_input_tokens && a.output_tokens === b.output_tokens;
  if (steps.length !== records.length || steps.some((step, index) => !same(step, records[index]))) {
    throw new Error(`token_count totals (${steps.length} changes) disagree with the ${records.length} token_usage_record lines`);
  }
  return byId;
}

/** The running total of the last `token_count` among `lines`, as codexUsage compares them. */
function lastTotal(lines: any[]): string {
  const counts = lines.filter((line) => line.type === 'event_msg' && line.payload?.type === 'token_count' && line.payload.info?.last_token_usage);
  return counts.length === 0 ? '' : JSON.stringify(counts.at(-1).payload.info.total_token_usage);
}

/**
 * pi: each assistant message carries its normalised usage (and, in newer versions, its
 * response's `responseId`), aborted replies too. A fork's header names its parent
 * (`parentSession`, v1 `branchedFrom`) and the time it was made: the entries older than that
 * were copied from the parent, which was billed for them.
 */
function piUsage(lines: any[]): Map<string, CallUsage> {
  const header = lines[0]?.type === 'session' ? lines[0] : undefined;
  const forkedAt = header?.parentSession || header?.branchedFrom ? header.timestamp : undefined;
  const byId = new Map<string, CallUsage>();
  lines.forEach((line, index) => {
    const message = line.type === 'message' && line.message?.role === 'assistant' ? line.message : undefined;
    if (!message?.usage || (forkedAt && line.timestamp < forkedAt)) return;
    // Keyed by the response's id; a second reply under an id already seen is a second call
    // (a test provider that answers every request with one fixed id).
    const id = message.responseId !== undefined && !byId.has(message.responseId) ? message.responseId : `${message.responseId ?? ''} line ${index + 1}`;
    byId.set(id, {
      input: message.usage.input,
      cacheRead: message.usage.cacheRead,
      cacheWrite: message.usage.cacheWrite,
      cacheWrite1h: 0,
      output: message.usage.output,
    });
  });
  return byId;
}

/**
 * Gemini CLI: one JSON document; each `gemini` message is one call, its `tokens` copied from the
 * API's usage: `input` is the whole prompt with `cached` in it, `tool` prompt tokens come on top,
 * `thoughts` are billed as output and not in `output`.
 */
function geminiUsage(document: any): Map<string, CallUsage> {
  const byId = new Map<string, CallUsage>();
  for (const message of document.messages ?? []) {
    const tokens = message.type === 'gemini' ? message.tokens : undefined;
    if (!tokens) continue;
    byId.set(message.id, {
      input: tokens.input - (tokens.cached ?? 0) + (tokens.tool ?? 0),
      cacheRead: tokens.cached ?? 0,
      cacheWrite: 0,
      cacheWrite1h: 0,
      output: tokens.output + (tokens.thoughts ?? 0),
    });
  }
  return byId;
}

/**
 * The usage a session file records, one entry per provider response, counted straight from its
 * lines. Responses recorded with no usage at all (a reply aborted before usage arrived, a fork's
 * zeroed copy) are left out, and so are a fork's copies of its parent's calls. `path`: where the
 * file is, for a Codex fork's parent beside it. Codex versions that record no response id key
 * their calls `token_count <n>`, in the order the file holds them.
 */
export function usageInFile(agent: SessionAgent, text: string, path?: string): Map<string, CallUsage> {
  const all =
    agent === 'gemini-cli'
      ? geminiUsage(JSON.parse(text))
      : agent === 'claude-code'
        ? claudeUsage(jsonLines(text))
        : agent === 'codex'
          ? codexUsage(jsonLines(text), path)
          : piUsage(jsonLines(text));
  return new Map([...all].filter(([, usage]) => !isZero(usage)));
}

/**
 * The files whose calls count in the spend of the session at `path`, found here by their own
 * rules: the session's file, Claude Code's subagent transcripts in `<session>/subagents/`, and a
 * Codex rollout's review rollouts beside it (their first line names it `parent_thread_id` and
 * `source.subagent: "review"`).
 */
export function sessionFiles(agent: SessionAgent, path: string): string[] {
  const files = [path];
  if (agent === 'claude-code') {
    const subagents = join(path.replace(/\.jsonl$/, ''), 'subagents');
    if (existsSync(subagents)) files.push(...readdirSync(subagents).filter((name) => name.endsWith('.jsonl')).sort().map((name) => join(subagents, name)));
  }
  if (agent === 'codex') {
    const firstLine = (file: string) => JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!);
    const own = firstLine(path);
    if (own.type === 'session_meta') {
      for (const name of readdirSync(dirname(path)).sort()) {
        const other = join(dirname(path), name);
        if (other === path || !name.startsWith('rollout-')) continue;
        const meta = firstLine(other).payload;
        if (meta?.source?.subagent === 'review' && meta.parent_thread_id === own.payload.id) files.push(other);
      }
    }
  }
  return files;
}

/** Calls summed into a Spend. */
export function spendOf(calls: Iterable<CallUsage>): Spend {
  let total = ZERO;
  for (const usage of calls) total = add(total, usage);
  return total;
}

/**
 * The spend of the session at `path` counted by hand: every billed call of its files, once
 * (a Claude Code response a subagent transcript repeats is one call: its id says so).
 */
export function spendByHand(agent: SessionAgent, path: string): Spend {
  const calls = new Map<string, CallUsage>();
  for (const file of sessionFiles(agent, path)) {
    for (const [id, usage] of usageInFile(agent, readFileSync(file, 'utf8'), file)) calls.set(agent === 'claude-code' ? id : `${file} ${id}`, usage);
  }
  return spendOf(calls.values());
}

/** The agent that wrote a fixture, from where it lies (`fixtures/{real,agents}/<agent>/…`). */
export function fixtureAgent(path: string): SessionAgent {
  const agent = path.split('/').find((part) => ['claude-code', 'codex', 'pi', 'gemini-cli'].includes(part));
  if (!agent) throw new Error(`${basename(path)}: not under an agent's fixture folder`);
  return agent as SessionAgent;
}
