#!/usr/bin/env node
/**
 * Generates fixtures/bug.jsonl: a canonical session reproducing the bug report's trace. Nine turns
 * whose first provider calls report exactly 20,264 / 22,565 / 58,884 / 77,702 / 77,875 /
 * 78,703 / 81,427 / 89,910 / 90,212 input tokens; turn 3 has 13 calls; about 4.25M input
 * tokens in all. Every message is sized so chars/4 matches the reported growth, and each call
 * reports input = fixed overhead (system prompt + tool schemas, not in the file) + everything
 * before it. Deterministic: a seeded generator, no clock, no randomness from outside.
 *
 *   node scripts/make-bug-fixture.js > fixtures/bug.jsonl
 */

const BASELINES = [20_264, 22_565, 58_884, 77_702, 77_875, 78_703, 81_427, 89_910, 90_212];
const TARGET_TOTAL = 4_250_000;
/** The system prompt and tool schemas the agent sends on every call (not stored in the session). */
const FIRST_USER_TOKENS = 64;
const OVERHEAD = BASELINES[0] - FIRST_USER_TOKENS;
/** The bug report's trace ran on Opus ($15 per million input tokens): the model each call reports. */
const MODEL = 'claude-opus-4-1-20250805';

// mulberry32: small, fast, and the same on every machine.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
let random = rng(4_250_000);
const pick = (items) => items[Math.floor(random() * items.length)];

/** Token estimate exactly as the tool computes it: ceil(chars / 4) over all blocks. */
function blockChars(block) {
  switch (block.type) {
    case 'text':
    case 'thinking':
      return block.text.length;
    case 'tool_request':
      return block.name.length + JSON.stringify(block.arguments).length;
    case 'tool_result':
      return block.output.length;
  }
  throw new Error(`unknown block ${block.type}`);
}
const estimate = (content) => Math.ceil(content.reduce((n, b) => n + blockChars(b), 0) / 4);

// ── Realistic filler, cut to an exact length ─────────────────────────────────────────────

const RUST_LINES = [
  'use std::sync::{Arc, Mutex};',
  'use tracing::{debug, info, info_span, warn, Instrument};',
  'use coop_core::{Content, Message, Provider, Role, SessionKey, Usage};',
  'pub(crate) struct Gateway {',
  '    sessions: Mutex<HashMap<SessionKey, Vec<Message>>>,',
  '    session_store: SessionStore,',
  '    provider: Arc<dyn Provider>,',
  '}',
  'impl Gateway {',
  '    pub(crate) async fn run_turn_with_trust(&self, session_key: &SessionKey, text: &str) -> Result<TurnOutcome> {',
  '        let messages = self.messages(session_key);',
  '        let (response, usage) = self.assistant_response(&system_prompt, &messages, &tool_defs, &event_tx).await?;',
  '        for iteration in 0..self.config.max_iterations {',
  '            debug!(iteration, message_count = messages.len(), "provider request");',
  '            if response.tool_requests().is_empty() { break; }',
  '        }',
  '    fn messages(&self, key: &SessionKey) -> Vec<Message> {',
  '        self.sessions.lock().expect("sessions poisoned").get(key).cloned().unwrap_or_default()',
  '    }',
  '    let span = info_span!("provider_request", model = %self.provider.model_info().name);',
  '    match self.session_store.load(key) {',
  '        Ok(Some(history)) => history,',
  '        Err(e) => { warn!(session = %key, error = %e, "failed to load session"); Vec::new() }',
  '    }',
  '#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]',
  'pub struct Usage { pub input_tokens: Option<u32>, pub output_tokens: Option<u32> }',
  '    pub fn with_metadata(mut self, key: &str, value: serde_json::Value) -> Self {',
  '        self.metadata.insert(key.to_string(), value);',
  '        self',
  '    }',
  '/// Tokens reserved for the model\'s response and intra-turn tool calls.',
  'const DEFAULT_RESERVE_TOKENS: usize = 30_000;',
  '    let tool_defs = self.tools.definitions();',
  '    event_tx.send(TurnEvent::ToolResult { id: result.id.clone(), output: result.output.clone() }).await.ok();',
];
const LOG_LINES = [
  '   Compiling coop-core v0.4.2 (/home/dev/coop/crates/coop-core)',
  '   Compiling coop-gateway v0.4.2 (/home/dev/coop/crates/coop-gateway)',
  'warning: unused import: `debug`',
  '  --> crates/coop-gateway/src/compaction.rs:4:15',
  'test gateway::tests::turn_appends_user_message ... ok',
  'test gateway::tests::tool_loop_stops_without_requests ... ok',
  'test compaction::tests::cut_point_never_splits_tool_result ... ok',
  '2026-02-03T10:14:07.117Z  INFO provider_request{model=claude-opus}: input_tokens=58884 output_tokens=412',
  'crates/coop-gateway/src/gateway.rs:212:        let messages = self.messages(session_key);',
  'crates/coop-gateway/src/session_store.rs:41:    pub(crate) fn load(&self, key: &SessionKey) -> Result<Option<Vec<Message>>> {',
  '    Finished `dev` profile [unoptimized + debuginfo] target(s) in 14.82s',
];
const PROSE = [
  'The provider call re-sends the complete history on every iteration, so the context only grows.',
  'I will keep the change inside coop-gateway as requested and leave the Provider trait alone.',
  'The cut point must never separate a ToolResult from the ToolRequest that produced it.',
  'Compaction state is stored beside the session JSONL so the original history stays untouched.',
  'Next I will wire should_compact into run_turn_with_trust before the iteration loop.',
  'The tests cover the threshold, the provider context builder and the cut point rules.',
];

function filler(lines, length, numbered) {
  let out = '';
  let n = 1;
  while (out.length < length) {
    const line = pick(lines);
    out += numbered ? `${String(n).padStart(5)}\t${line}\n` : `${line}\n`;
    n++;
  }
  return out.slice(0, length);
}

/** Pads the text block of a message so the whole message is exactly `tokens` tokens. */
function sizeMessage(content, tokens, lines) {
  const textIndex = content.findIndex((block) => block.type === 'text' || block.type === 'tool_result');
  const block = content[textIndex];
  const key = block.type === 'text' ? 'text' : 'output';
  const others = content.reduce((n, b, i) => (i === textIndex ? n : n + blockChars(b)), 0);
  const want = tokens * 4 - others;
  if (want <= block[key].length) {
    block[key] = block[key].slice(0, Math.max(0, want));
  } else {
    block[key] = block[key] + (block[key] ? '\n' : '') + filler(lines, want - block[key].length - (block[key] ? 1 : 0), key === 'output');
  }
  if (estimate(content) !== tokens) throw new Error(`sizing failed: wanted ${tokens}, got ${estimate(content)}`);
  return content;
}

// ── The story: what each turn asks and which tools it runs ───────────────────────────────

const USER_PROMPTS = [
  'Our gateway re-sends the whole conversation on every provider call. Look at crates/coop-gateway and tell me where the history is built.',
  'Read the session store, the provider trait and the gateway loop, then propose how to add compaction. Do not change coop-core types.',
  'Go ahead and implement compaction in crates/coop-gateway/src/compaction.rs following pi\'s approach. Keep it under 300 lines.',
  'Why does the cut point skip back past tool results?',
  'Should the summary be a user message or a system message?',
  'Add the compaction store next to the session store and persist the state as JSON.',
  'cargo test fails in compaction::tests; fix it and run the whole suite.',
  'What is the default reserve now?',
  'Now add tracing: a compaction span with messages_to_summarize, cut_index and tokens_before, then run clippy and the tests.',
];

/** Per turn: number of provider calls, and the tools used by the calls that request one. */
const TURN_PLANS = [
  { tools: ['grep', 'read'] },
  { tools: ['read', 'read', 'read', 'grep', 'read', 'read', 'bash', 'read'] },
  { tools: ['read', 'write', 'edit', 'bash', 'read', 'edit', 'bash', 'edit', 'read', 'edit', 'bash', 'edit'] },
  { tools: [] },
  { tools: ['read'] },
  { tools: ['write', 'edit'] },
  { tools: ['bash', 'read', 'edit', 'bash'] },
  { tools: [] },
  { tools: null }, // the last turn's length is solved for the target total
];
const LAST_TURN_TOOLS = ['edit', 'bash', 'read', 'edit', 'bash', 'edit', 'read', 'bash'];

const FILES = [
  'crates/coop-gateway/src/gateway.rs',
  'crates/coop-gateway/src/session_store.rs',
  'crates/coop-core/src/types.rs',
  'crates/coop-core/src/provider.rs',
  'crates/coop-gateway/src/config.rs',
  'crates/coop-gateway/src/compaction.rs',
  'crates/coop-gateway/src/compaction_store.rs',
  'crates/coop-gateway/tests/compaction.rs',
];
const COMMANDS = [
  'cargo check -p coop-gateway',
  'cargo test -p coop-gateway compaction',
  'cargo clippy --all-targets -- -D warnings',
  'cargo test --workspace',
];
const ERRORS = [
  "error[E0599]: no method named `with_metadata` found for struct `Message` in the current scope",
  'error[E0308]: mismatched types: expected `usize`, found `u32`',
  "thread 'compaction::tests::cut_point_respects_keep_recent_tokens' panicked at crates/coop-gateway/tests/compaction.rs:88:9",
];

let callCounter = 0;
function toolCall(kind, turn) {
  const id = `call_${String(++callCounter).padStart(3, '0')}`;
  const file = turn === 0 ? FILES[0] : pick(FILES);
  switch (kind) {
    case 'read':
      return { id, name: 'read_file', arguments: { path: file }, result: '', lines: RUST_LINES };
    case 'write':
      return { id, name: 'write_file', arguments: { path: FILES[5 + (callCounter % 3)], content: RUST_LINES.slice(0, 8).join('\n') }, result: 'Wrote file.', lines: LOG_LINES };
    case 'edit':
      return {
        id,
        name: 'edit_file',
        arguments: { path: pick(FILES.slice(0, 2).concat(FILES.slice(5))), old_string: pick(RUST_LINES), new_string: pick(RUST_LINES) },
        result: 'Applied 1 edit.',
        lines: LOG_LINES,
      };
    case 'grep':
      return { id, name: 'bash', arguments: { command: 'rg -n "fn messages|assistant_response" crates/' }, result: '', lines: LOG_LINES };
    case 'bash': {
      const command = pick(COMMANDS);
      const failed = random() < 0.4;
      return {
        id,
        name: 'bash',
        arguments: { command },
        result: failed ? `${pick(ERRORS)}\nexit code: 101` : 'exit code: 0',
        lines: LOG_LINES,
        isError: failed,
      };
    }
  }
  throw new Error(kind);
}

/** Relative weight of each tool's output when a turn's growth is shared out. */
const WEIGHT = { read: 6, grep: 1.5, bash: 2, write: 0.3, edit: 0.25 };

// ── Assembly ──────────────────────────────────────────────────────────────────────────────

function buildSession(lastTurnCalls) {
  const records = [];
  let id = 0;
  let clock = Date.parse('2026-02-03T10:00:00Z');
  let context = OVERHEAD; // what the next call would report: overhead + all messages so far
  let total = 0;
  callCounter = 0;
  random = rng(4_250_000); // every build starts from the same seed
  const push = (role, content, metadata) => {
    clock += 1000 + Math.floor(random() * 20_000);
    records.push({
      id: `msg-${String(++id).padStart(4, '0')}`,
      role,
      content,
      ...(metadata ? { metadata } : {}),
      timestamp: new Date(clock).toISOString(),
    });
    context += estimate(content);
  };

  for (let turn = 0; turn < 9; turn++) {
    const userTokens = turn === 0 ? FIRST_USER_TOKENS : BASELINES[turn] - context;
    if (userTokens < 10) throw new Error(`turn ${turn + 1}: growth left no room for the user message`);
    push('user', sizeMessage([{ type: 'text', text: USER_PROMPTS[turn] }], userTokens, PROSE));
    if (context !== BASELINES[turn]) throw new Error(`turn ${turn + 1}: baseline ${context} != ${BASELINES[turn]}`);

    const tools = TURN_PLANS[turn].tools ?? LAST_TURN_TOOLS.concat(LAST_TURN_TOOLS, LAST_TURN_TOOLS).slice(0, lastTurnCalls - 1);
    // Growth this turn must leave room for the next user prompt (about 60-140 tokens).
    const nextUser = turn < 8 ? 60 + Math.floor(random() * 80) : 0;
    const growth = turn < 8 ? BASELINES[turn + 1] - BASELINES[turn] - nextUser : 6_000;
    const calls = tools.map((kind) => toolCall(kind, turn));
    // Room for the request itself (a write carries file content) plus a sentence of prose.
    const requestTokens = calls.map((call) => Math.ceil((call.name.length + JSON.stringify(call.arguments).length) / 4) + 12);
    const assistantTokens = requestTokens.map((least) => Math.max(least, 50 + Math.floor(random() * 60)));
    const finalTokens = Math.min(400, Math.max(40, Math.floor(growth * 0.08)));
    let budget = growth - finalTokens - assistantTokens.reduce((a, b) => a + b, 0);
    if (budget < tools.length * 8) {
      // A short turn: shrink the assistant messages to leave tool outputs some room.
      requestTokens.forEach((least, i) => (assistantTokens[i] = least));
      budget = growth - finalTokens - assistantTokens.reduce((a, b) => a + b, 0);
    }
    const weights = tools.map((kind) => WEIGHT[kind] * (0.6 + random() * 0.8));
    const weightSum = weights.reduce((a, b) => a + b, 0);
    let assigned = 0;
    const resultTokens = weights.map((w, i) => {
      const share = i === weights.length - 1 ? budget - assigned : Math.max(8, Math.floor((budget * w) / weightSum));
      assigned += share;
      return share;
    });

    for (let i = 0; i <= tools.length; i++) {
      const input = context;
      total += input;
      if (i < tools.length) {
        const call = calls[i];
        const content = sizeMessage(
          [
            { type: 'text', text: pick(PROSE) },
            { type: 'tool_request', id: call.id, name: call.name, arguments: call.arguments },
          ],
          assistantTokens[i],
          PROSE,
        );
        push('assistant', content, { input_tokens: input, output_tokens: assistantTokens[i], model: MODEL });
        push(
          'user',
          sizeMessage(
            [{ type: 'tool_result', tool_request_id: call.id, output: call.result, is_error: Boolean(call.isError) }],
            resultTokens[i],
            call.lines,
          ),
        );
      } else {
        const content = sizeMessage([{ type: 'text', text: pick(PROSE) }], finalTokens, PROSE);
        push('assistant', content, { input_tokens: input, output_tokens: finalTokens, model: MODEL });
      }
    }
  }
  return { records, total };
}

// The last turn's number of calls is the one free parameter: pick the one nearest the target.
let best = null;
for (let calls = 1; calls <= 40; calls++) {
  const built = buildSession(calls);
  if (!best || Math.abs(built.total - TARGET_TOTAL) < Math.abs(best.total - TARGET_TOTAL)) best = { ...built, calls };
}
process.stderr.write(`bug.jsonl: ${best.records.length} messages, ${best.calls} calls in turn 9, ${best.total} input tokens in all\n`);
for (const record of best.records) process.stdout.write(`${JSON.stringify(record)}\n`);
