/**
 * Names the structures a session file holds (parallel tool calls, hooks, a compaction, an
 * aborted turn, …), read straight from its JSON lines, so the generator can check a scenario
 * did what it says and the manifest can list them. Each agent's rules follow its own format;
 * nothing here is shared with the package's readers.
 */

const parse = (text) =>
  text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

/** Parents with more than one child among `nodes` ({id, parent}). */
function forks(nodes) {
  const children = new Map();
  for (const { id, parent } of nodes) {
    if (!parent) continue;
    children.set(parent, [...(children.get(parent) ?? []), id]);
  }
  return [...children.values()].filter((ids) => ids.length > 1);
}

function claudeStructures(path, lines) {
  const found = new Set();
  if (/\/subagents\/agent-[^/]+\.jsonl$/.test(path)) found.add('subagent-transcript');
  const blocksById = new Map();
  for (const line of lines) {
    if (line.type === 'assistant' && Array.isArray(line.message?.content) && line.message.model !== '<synthetic>') {
      const id = line.message.id;
      blocksById.set(id, [...(blocksById.get(id) ?? []), ...line.message.content]);
      const usage = line.message.usage ?? {};
      if ((usage.cache_creation?.ephemeral_1h_input_tokens ?? 0) > 0) found.add('cache-write-1h');
    }
    if (line.type === 'attachment' && /^hook_/.test(line.attachment?.type ?? '')) found.add('hooks');
    if (line.type === 'progress' && line.data?.type === 'hook_progress') found.add('hooks');
    if (line.type === 'system' && line.subtype === 'compact_boundary') found.add(`compaction-${line.compactMetadata?.trigger ?? 'unknown'}`);
    if (line.type === 'queue-operation' && line.operation === 'enqueue') found.add('prompt');
  }
  for (const blocks of blocksById.values()) {
    if (blocks.filter((block) => block.type === 'tool_use').length > 1) found.add('parallel-tool-calls');
    if (blocks.some((block) => block.type === 'thinking')) found.add('thinking');
    if (blocks.some((block) => block.type === 'tool_use' && block.name === 'Agent')) found.add('subagent');
  }
  if (lines.filter((line) => line.type === 'queue-operation' && line.operation === 'enqueue').length > 1) found.add('resumed');
  found.delete('prompt');
  // A rewind: one line with two children that each lead to a prompt through lines that are no
  // messages (hook runs, listings); parallel tool calls also fork the chain, but into results.
  // Prompts the user typed (a slash command is recorded as `<command-name>` / `<local-command-…>` lines).
  const prompts = lines.filter(
    (line) => line.type === 'user' && typeof line.message?.content === 'string' && !line.isMeta && !line.isCompactSummary && !/^<(command-|local-command-)/.test(line.message.content),
  );
  const children = new Map();
  for (const line of lines) if (line.parentUuid) children.set(line.parentUuid, [...(children.get(line.parentUuid) ?? []), line]);
  const below = (line) => children.get(line.uuid) ?? [];
  const leadsToPrompt = (line) => prompts.includes(line) || (line.type === 'attachment' && below(line).some(leadsToPrompt));
  if (lines.some((line) => line.uuid && below(line).filter(leadsToPrompt).length > 1)) found.add('abandoned-branch');
  // An aborted turn: a prompt with no answer below it, or an answer cut before its stop reason.
  // (A compaction keeps the last prompt in its preserved segment, answered after the summary.)
  const preserved = new Set();
  for (const line of lines) {
    const kept = line.compactMetadata ?? {};
    for (const uuid of [kept.preservedSegment?.tailUuid, ...(kept.preservedMessages?.uuids ?? [])]) if (uuid) preserved.add(uuid);
  }
  const answered = (line) => below(line).some((kid) => kid.type === 'assistant' || ((kid.type !== 'user' || kid.isMeta) && answered(kid)));
  if (prompts.some((line) => !preserved.has(line.uuid) && !answered(line))) found.add('aborted');
  const final = new Set(lines.filter((line) => line.type === 'assistant' && line.message?.stop_reason).map((line) => line.message.id));
  if ([...blocksById.keys()].some((id) => !final.has(id))) found.add('aborted');
  return found;
}

function codexStructures(lines) {
  const found = new Set();
  let callsSinceUsage = 0;
  let turns = 0;
  let metas = 0;
  let forked = false;
  let sinceResults = null; // lines since the last tool result, while no usage has followed it
  let recorded = false; // a token_usage_record since the last model output
  for (const line of lines) {
    const payload = line.payload ?? {};
    if (line.type === 'response_item' && payload.type === 'function_call') callsSinceUsage++;
    if (line.type === 'response_item' && ['message', 'function_call', 'reasoning'].includes(payload.type) && payload.role !== 'user') recorded = false;
    if (line.type === 'response_item' && payload.type === 'function_call_output') sinceResults = 0;
    const usage = line.type === 'token_usage_record' ? payload.usage : line.type === 'event_msg' && payload.type === 'token_count' ? payload.info?.last_token_usage : null;
    if (usage) {
      if (callsSinceUsage > 1) found.add('parallel-tool-calls');
      callsSinceUsage = 0;
      if ((usage.cached_input_tokens ?? 0) > 0) found.add('cached-input');
    }
    if (line.type === 'token_usage_record') recorded = true;
    // A call's usage written after its tool results, with no record of the call before them.
    if (line.type === 'event_msg' && payload.type === 'token_count' && usage && sinceResults !== null && !recorded) found.add('usage-after-tool-results');
    if (usage || (line.type === 'response_item' && payload.type === 'message')) sinceResults = null;
    if (line.type === 'event_msg' && payload.type === 'task_started') turns++;
    if (line.type === 'event_msg' && payload.type === 'turn_aborted') found.add('aborted');
    if (line.type === 'compacted') found.add('compacted');
    if (line.type === 'event_msg' && payload.type === 'item_completed' && /ReviewMode$/.test(payload.item?.type ?? '')) found.add('review');
    if (line.type === 'session_meta') {
      metas++;
      if (payload.source?.subagent === 'review') found.add('review');
      if (metas === 1 && payload.forked_from_id) {
        forked = true;
        found.add('forked');
        if (payload.history_base) found.add('fork-refers-to-history');
      }
      if (metas > 1 && forked) found.add('fork-copies-history');
    }
  }
  if (turns > 1) found.add('resumed');
  return found;
}

function piStructures(lines) {
  const found = new Set();
  const header = lines.find((line) => line.type === 'session');
  if (header?.parentSession) found.add('fork');
  for (const line of lines) {
    const message = line.message ?? {};
    if (line.type === 'message' && message.role === 'assistant') {
      if ((message.content ?? []).filter((block) => block.type === 'toolCall').length > 1) found.add('parallel-tool-calls');
      if (message.stopReason === 'aborted') found.add('aborted');
      if ((message.usage?.cacheRead ?? 0) > 0) found.add('cached-input');
    }
    if (line.type === 'compaction') found.add('compaction');
    if (line.type === 'branch_summary') found.add('branch-summary');
  }
  // pi --continue leaves no mark of its own: a second prompt is all a file shows.
  if (lines.filter((line) => line.type === 'message' && line.message?.role === 'user').length > 1) found.add('several-turns');
  if (forks(lines.filter((line) => line.id).map((line) => ({ id: line.id, parent: line.parentId }))).length > 0) found.add('branch');
  return found;
}

/** The structures a session file of `agent` holds, sorted. `path` is relative to the agent's home folder. */
export function structuresOf(agent, path, text) {
  const lines = parse(text);
  const found = agent === 'claude-code' ? claudeStructures(path, lines) : agent === 'codex' ? codexStructures(lines) : piStructures(lines);
  return [...found].sort();
}
