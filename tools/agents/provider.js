/**
 * A scripted local model provider for the real agents: a node:http server on 127.0.0.1 (port 0)
 * that speaks Anthropic Messages (`POST /v1/messages`, streamed or not, plus `count_tokens`),
 * OpenAI Responses (`POST /v1/responses`, streamed) and OpenAI Chat Completions
 * (`POST /v1/chat/completions`, streamed or not). Each billed answer comes from a script: text,
 * one or several tool calls in one response, and the usage numbers it reports. Requests the
 * script does not plan for (an agent's title or topic calls, token counts) are side requests,
 * answered with a short text and their own usage, and recorded as such.
 *
 * Every request is recorded (path, headers without the API key, parsed body) so a test can
 * assert what an agent sent; every billed answer is listed in `calls` with the usage it
 * reported. What the agents do with the answers (session files) is left to the caller.
 */
import { createServer } from 'node:http';

/**
 * Scripted usage, in one neutral shape for every API:
 *   input        uncached input tokens
 *   cacheRead    input tokens read from the cache
 *   cacheWrite5m, cacheWrite1h   input tokens written to the cache (Anthropic's two TTLs)
 *   output       output tokens (including reasoning)
 *   reasoning    the reasoning part of output (OpenAI APIs only; informational)
 * OpenAI APIs report input INCLUDING the cached part: input + cacheRead.
 */
export function normalUsage(usage = {}) {
  return {
    input: usage.input ?? 0,
    cacheRead: usage.cacheRead ?? 0,
    cacheWrite5m: usage.cacheWrite5m ?? 0,
    cacheWrite1h: usage.cacheWrite1h ?? 0,
    output: usage.output ?? 0,
    reasoning: usage.reasoning ?? 0,
  };
}

/** Usage as the Anthropic Messages API reports it. */
export function anthropicUsage(usage) {
  const u = normalUsage(usage);
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: u.cacheWrite5m + u.cacheWrite1h,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite5m, ephemeral_1h_input_tokens: u.cacheWrite1h },
    output_tokens: u.output,
    service_tier: 'standard',
  };
}

/** Usage as the OpenAI Responses API reports it (input includes the cached part). */
export function responsesUsage(usage) {
  const u = normalUsage(usage);
  const input = u.input + u.cacheRead;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: input + u.output,
  };
}

/**
 * Usage as OpenAI Chat Completions reports it: the prompt includes the cached part. Cache
 * writes follow the OpenAI-compatible routers that report them (`cache_write_tokens`, also
 * counted in `cached_tokens`), which is how pi reads them.
 */
export function chatUsage(usage) {
  const u = normalUsage(usage);
  const writes = u.cacheWrite5m + u.cacheWrite1h;
  const prompt = u.input + u.cacheRead + writes;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead + writes, ...(writes > 0 ? { cache_write_tokens: writes } : {}) },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

const API_OF_PATH = [
  [/^\/(v1\/)?messages\/count_tokens/, 'count_tokens'],
  [/^\/(v1\/)?messages/, 'anthropic'],
  [/^\/(v1\/)?responses\/compact/, 'responses-compact'],
  [/^\/(v1\/)?responses/, 'responses'],
  [/^\/(v1\/)?chat\/completions/, 'chat'],
  [/^\/(v1\/)?models/, 'models'],
];

/** Which API a request path belongs to (`other` for anything else). */
export function apiOf(path) {
  for (const [pattern, api] of API_OF_PATH) if (pattern.test(path)) return api;
  return 'other';
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'cookie']);

/** Which key the request carried: `test` (the only key the agents are given), `other` or `none`. */
function keyOf(headers) {
  const raw = headers['x-api-key'] ?? headers['api-key'] ?? headers['authorization'];
  if (raw === undefined) return 'none';
  const value = String(raw).replace(/^Bearer\s+/i, '');
  return value === 'test' ? 'test' : 'other';
}

function withoutSecrets(headers) {
  const kept = {};
  for (const [name, value] of Object.entries(headers)) if (!SECRET_HEADERS.has(name)) kept[name] = value;
  return kept;
}

/**
 * The default kind of a request: `turn` for a main agent call (those always send their tools),
 * `side` for a call on the side of the conversation (titles, topics, quota probes: no tools).
 * Agents with other kinds (a compaction call, say) pass their own `kindOf`.
 */
export function defaultKindOf(request) {
  const tools = request.body?.tools;
  return Array.isArray(tools) && tools.length > 0 ? 'turn' : 'side';
}

/** Ids the provider gives responses and tool calls: the session files carry them. */
const RESPONSE_ID_PREFIX = { anthropic: 'msg_scripted', responses: 'resp_scripted', chat: 'chatcmpl_scripted' };
const TOOL_ID_PREFIX = { anthropic: 'toolu_scripted', responses: 'call_scripted', chat: 'call_scripted' };

const SIDE_USAGE = { input: 13, output: 5 };

/**
 * Starts the provider.
 *   script:   steps answered strictly in order, one per billed request. A step is
 *             { kind?: 'turn', text?, thinking?, toolCalls?: [{name, input, id?}], usage, hang?,
 *               status?, error?, model?, label? }.
 *             A request takes the next step when its kind (kindOf) equals the step's kind;
 *             `side` requests get sideReply; any other request is `unexpected` (answered with a
 *             short text and no usage, so a script that went out of step shows in `requests`).
 *             `hang: true | {afterParts: n}` streams the start of the reply (n complete parts)
 *             and then stalls until the client hangs up; `status` answers that HTTP error.
 *   kindOf(request): the request's kind (default: defaultKindOf).
 *   sideReply(request): the step for a side request (default: a short text, SIDE_USAGE).
 * Returns { url, port, requests, calls, pending(), append(), received(), hung(), answered(), close() }.
 */
export async function startScriptedProvider({ script = [], kindOf = defaultKindOf, sideReply } = {}) {
  const steps = [...script];
  let cursor = 0;
  let counter = 0;
  const requests = [];
  const calls = [];
  const waiters = [];
  const open = new Set();

  const notify = () => {
    for (const waiter of [...waiters]) {
      if (waiter.test()) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const waitFor = (test) =>
    test() ? Promise.resolve() : new Promise((resolve) => waiters.push({ test, resolve }));

  const nextId = (prefix) => `${prefix}${String(++counter).padStart(4, '0')}`;

  function chooseStep(request) {
    const kind = kindOf(request);
    request.kind = kind;
    if (kind === 'side') return { step: sideReply?.(request) ?? { text: 'Side answer.', usage: SIDE_USAGE }, role: 'side', index: null };
    const step = steps[cursor];
    if (step && (step.kind ?? 'turn') === kind) {
      cursor++;
      return { step, role: 'scripted', index: cursor - 1 };
    }
    return { step: { text: 'Unexpected request.', usage: {} }, role: 'unexpected', index: null };
  }

  const server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const path = req.url ?? '/';
      const request = {
        n: requests.length + 1,
        at: Date.now(),
        method: req.method,
        path,
        api: apiOf(path),
        headers: withoutSecrets(req.headers),
        key: keyOf(req.headers),
        body,
        kind: null,
        role: 'none',
        step: null,
        answered: 'pending',
        disconnected: false,
      };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableEnded) {
          request.disconnected = true;
          notify();
        }
      });
      try {
        route(request, res);
      } catch (error) {
        request.answered = 'error';
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: String(error?.message ?? error) } }));
      }
      notify();
    });
  });

  function route(request, res) {
    if (request.method === 'HEAD' || (request.method === 'GET' && request.path === '/')) {
      request.answered = 'ok';
      res.writeHead(200);
      res.end();
      return;
    }
    if (request.api === 'models') {
      request.answered = 'models';
      json(res, 200, { object: 'list', data: [], has_more: false });
      return;
    }
    if (request.api === 'count_tokens') {
      request.role = 'side';
      request.answered = 'count';
      json(res, 200, { input_tokens: Math.ceil(JSON.stringify(request.body ?? '').length / 4) });
      return;
    }
    if (request.method !== 'POST' || !['anthropic', 'responses', 'chat'].includes(request.api)) {
      request.answered = 'not-found';
      json(res, 404, { error: { type: 'not_found_error', message: `no route ${request.method} ${request.path}` } });
      return;
    }
    const { step, role, index } = chooseStep(request);
    request.role = role;
    request.step = index;
    if (step.status) {
      request.answered = `status-${step.status}`;
      json(res, step.status, { error: { type: 'api_error', message: step.error ?? 'scripted error' } });
      return;
    }
    const model = step.model ?? request.body?.model ?? 'scripted-model';
    const stream = request.api === 'responses' || request.body?.stream === true;
    const responseId = nextId(RESPONSE_ID_PREFIX[request.api]);
    const reply = { ...step, id: responseId, model, toolCalls: (step.toolCalls ?? []).map((call) => ({ ...call, id: call.id ?? nextId(TOOL_ID_PREFIX[request.api]) })) };
    // The Responses API names each output item too; versions of Codex that keep no response id record these.
    const output = request.api === 'responses' ? responsesOutput(reply) : [];
    const call = {
      n: request.n,
      responseId,
      api: request.api,
      role,
      step: index,
      label: step.label ?? null,
      kind: request.kind,
      model,
      usage: step.hang ? reportedBeforeStall(request.api, step.usage) : normalUsage(step.usage),
      toolCalls: reply.toolCalls.map(({ id, name }) => ({ id, name })),
      itemIds: output.map((item) => item.id),
      hung: Boolean(step.hang),
    };
    calls.push(call);
    request.answered = step.hang ? 'hung' : role;
    if (request.api === 'anthropic') answerAnthropic(res, reply, stream);
    else if (request.api === 'responses') answerResponses(res, reply, output);
    else answerChat(res, reply, stream);
  }

  /**
   * What a stalled reply reported before it stalled: Anthropic's stream reports input and
   * cache figures (and a partial output count) at its start; the OpenAI APIs report usage
   * only at the end, so nothing.
   */
  function reportedBeforeStall(api, usage) {
    if (api !== 'anthropic') return null;
    const u = normalUsage(usage);
    return { ...u, output: Math.min(1, u.output) };
  }

  /** Where a hanging reply stalls: before part `afterParts` (0: nothing complete), or null. */
  function stallPoint(reply, parts) {
    if (!reply.hang) return null;
    const after = reply.hang === true ? 0 : reply.hang.afterParts ?? 0;
    return Math.min(after, Math.max(parts - 1, 0));
  }

  function json(res, status, value) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  }

  function anthropicBlocks(reply) {
    const blocks = [];
    if (reply.thinking) blocks.push({ type: 'thinking', thinking: reply.thinking, signature: 'scripted-signature' });
    if (reply.text) blocks.push({ type: 'text', text: reply.text });
    for (const call of reply.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input ?? {} });
    return blocks;
  }

  function answerAnthropic(res, reply, stream) {
    const id = reply.id;
    const usage = anthropicUsage(reply.usage);
    const blocks = anthropicBlocks(reply);
    const stopReason = reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
    if (!stream) {
      json(res, 200, { id, type: 'message', role: 'assistant', model: reply.model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': nextId('req_scripted') });
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    // The API reports input and cache figures at the start and the output count at the end;
    // the start carries a small partial output count, as the real stream does.
    send('message_start', { message: { id, type: 'message', role: 'assistant', model: reply.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) } } });
    const stallAt = stallPoint(reply, blocks.length);
    for (const [index, block] of blocks.entries()) {
      if (index === stallAt) {
        // A block started and never finished: the client sees a reply cut mid-stream.
        send('content_block_start', { index, content_block: block.type === 'tool_use' ? { type: 'tool_use', id: block.id, name: block.name, input: {} } : { type: 'text', text: '' } });
        return;
      }
      if (block.type === 'text') {
        send('content_block_start', { index, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else if (block.type === 'thinking') {
        send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
        send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
      } else {
        send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      }
      send('content_block_stop', { index });
    }
    if (stallAt !== null) return;
    send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
    send('message_stop', {});
    res.end();
  }

  /** A Responses API reply's output items: its text, then its tool calls. */
  function responsesOutput(reply) {
    const output = [];
    if (reply.text) output.push({ type: 'message', id: nextId('msg_scripted'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] });
    for (const call of reply.toolCalls) {
      output.push({ type: 'function_call', id: nextId('fc_scripted'), call_id: call.id, name: call.name, arguments: JSON.stringify(call.input ?? {}), status: 'completed' });
    }
    return output;
  }

  function answerResponses(res, reply, output) {
    const id = reply.id;
    const base = { id, object: 'response', created_at: 0, model: reply.model };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sequence = 0;
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
    send('response.created', { response: { ...base, status: 'in_progress', output: [] } });
    const stallAt = stallPoint(reply, output.length);
    for (const [index, item] of output.entries()) {
      if (index === stallAt) {
        send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', ...(item.type === 'message' ? { content: [] } : { arguments: '' }) } });
        return;
      }
      if (item.type === 'message') {
        send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
        send('response.output_text.delta', { output_index: index, item_id: item.id, content_index: 0, delta: item.content[0].text });
      } else {
        send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      }
      send('response.output_item.done', { output_index: index, item });
    }
    if (stallAt !== null) return;
    send('response.completed', { response: { ...base, status: 'completed', output, usage: responsesUsage(reply.usage) } });
    res.end();
  }

  function answerChat(res, reply, stream) {
    const id = reply.id;
    const usage = chatUsage(reply.usage);
    const finish = reply.toolCalls.length > 0 ? 'tool_calls' : 'stop';
    const toolCalls = reply.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) } }));
    const base = { id, created: 0, model: reply.model };
    if (!stream) {
      json(res, 200, {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) } }],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (choices, extra = {}) => res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
    send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    const parts = [...(reply.text ? [{ content: reply.text }] : []), ...toolCalls.map((call, index) => ({ tool_calls: [{ index, ...call }] }))];
    const stallAt = stallPoint(reply, parts.length);
    for (const [index, delta] of parts.entries()) {
      if (index === stallAt) return;
      send([{ index: 0, delta, finish_reason: null }]);
    }
    if (stallAt !== null) return;
    send([{ index: 0, delta: {}, finish_reason: finish }]);
    send([], { usage });
    res.write('data: [DONE]\n\n');
    res.end();
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    calls,
    /** Script steps not answered yet. */
    pending: () => steps.length - cursor,
    /** Appends steps to the script (for a later run against the same provider). */
    append: (...more) => steps.push(...more),
    /** Resolves once `count` requests have arrived. */
    received: (count) => waitFor(() => requests.length >= count),
    /** Resolves once a hanging step has been sent and is stalled mid-reply. */
    hung: () => waitFor(() => requests.some((request) => request.answered === 'hung')),
    /** Resolves once `count` script steps have been answered. */
    answered: (count) => waitFor(() => cursor >= count),
    close: () =>
      new Promise((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
      }),
  };
}
