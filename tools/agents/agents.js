/**
 * How to run each real agent offline against the scripted provider: the environment and config
 * files it needs in a throw-away HOME, the kind of each request it sends (so a script can plan
 * turns and compactions apart from side calls), and where it writes its session files.
 * Scenarios (what to ask and what the provider answers) live in scenarios.js.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The only API key any agent is given; it must never show up in a session file. */
export const API_KEY = 'test';

/** Environment that keeps every agent off the network apart from the provider. */
const QUIET = { NO_COLOR: '1', TERM: 'dumb', LANG: 'C.UTF-8', TZ: 'UTC' };

/** Every file under `dir`, as paths relative to it, sorted. */
export function filesUnder(dir) {
  const out = [];
  const walk = (folder) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() || statSync(path).isFile()) out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

const lastUserText = (request) => JSON.stringify(request.body?.messages?.at(-1)?.content ?? '');

/** Claude Code (`claude -p`), Anthropic Messages. Sessions: ~/.claude/projects/<cwd slug>/. */
export const claudeCode = {
  name: 'claude-code',
  package: '@anthropic-ai/claude-code',
  bin: 'claude',
  model: 'claude-sonnet-4-5',
  /**
   * Writes the settings file with hooks: PreToolUse and PostToolUse on Bash, SessionStart,
   * UserPromptSubmit and Stop. Claude Code 2.1 records each run as an `attachment` line
   * (`hook_success`) inside the parentUuid chain.
   */
  setup(home) {
    mkdirSync(join(home, '.claude'), { recursive: true });
    const hook = (command, matcher) => [{ ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command }] }];
    const hooks = {
      SessionStart: hook('echo session-start-hook'),
      UserPromptSubmit: hook('echo prompt-hook'),
      PreToolUse: hook('echo pre-tool-hook', 'Bash'),
      PostToolUse: hook('echo post-tool-hook', 'Bash'),
      Stop: hook('echo stop-hook'),
    };
    writeFileSync(join(home, '.claude', 'settings.json'), `${JSON.stringify({ hooks }, null, 2)}\n`);
  },
  env(home, provider, extra = {}) {
    return {
      ...QUIET,
      HOME: home,
      ANTHROPIC_BASE_URL: provider.url,
      ANTHROPIC_API_KEY: API_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      ...extra,
    };
  },
  /** `turn` (tools sent), `compaction` (the summary request of /compact or auto-compact), `side`. */
  kindOf(request) {
    const tools = request.body?.tools;
    if (!Array.isArray(tools) || tools.length === 0) return 'side';
    return /CRITICAL: Respond with TEXT ONLY/.test(lastUserText(request)) ? 'compaction' : 'turn';
  },
  sessionsDir: (home) => join(home, '.claude', 'projects'),
  /** The project folder name Claude Code derives from a cwd. */
  projectSlug: (cwd) => cwd.replace(/[^a-zA-Z0-9]/g, '-'),
};

/** Codex CLI (`codex exec`), OpenAI Responses. Sessions: $CODEX_HOME/sessions/YYYY/MM/DD/. */
export const codex = {
  name: 'codex',
  package: '@openai/codex',
  bin: 'codex',
  model: 'gpt-5.1-codex',
  /** Writes config.toml: the scripted provider, no retries (a script step answers once). */
  setup(home, provider, { autoCompactLimit } = {}) {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    const lines = [
      `model = "${this.model}"`,
      'model_provider = "scripted"',
      ...(autoCompactLimit ? [`model_auto_compact_token_limit = ${autoCompactLimit}`] : []),
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${provider.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "OPENAI_API_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ];
    writeFileSync(join(codexHome, 'config.toml'), lines.join('\n'));
  },
  env(home) {
    return { ...QUIET, HOME: home, CODEX_HOME: join(home, '.codex'), OPENAI_API_KEY: API_KEY };
  },
  /** Codex names the kind in its turn-metadata header: `turn`, `compaction`, … */
  kindOf(request) {
    try {
      const kind = JSON.parse(request.headers['x-codex-turn-metadata'] ?? '{}').request_kind;
      if (kind) return kind;
    } catch {
      // no header: judge by the tools, as for any agent
    }
    const tools = request.body?.tools;
    return Array.isArray(tools) && tools.length > 0 ? 'turn' : 'side';
  },
  sessionsDir: (home) => join(home, '.codex', 'sessions'),
  /** Codex prints `session id: <uuid>` in its banner (stderr in exec mode). */
  sessionId: (output) => /session id: ([0-9a-f-]{36})/.exec(output)?.[1] ?? null,
};

/** A pi extension: `/branch-at <entry id>` continues from that entry, summarising the branch left. */
const PI_BRANCH_EXTENSION = `export default function (pi) {
  pi.registerCommand('branch-at', {
    description: 'Continue the session from an earlier entry (a branch in the same file)',
    handler: async (args, ctx) => {
      await ctx.navigateTree(args.trim(), { summarize: true });
    },
  });
}
`;

/** pi (`pi -p`, `pi --mode rpc`), OpenAI Chat Completions. Sessions: <agent dir>/sessions/. */
export const pi = {
  name: 'pi',
  package: '@mariozechner/pi-coding-agent',
  bin: 'pi',
  provider: 'scripted',
  model: 'gpt-4.1',
  /**
   * Writes models.json (the scripted provider), settings.json (compaction settings) and an
   * extension with a `/branch-at <entry id>` command: pi moves to an earlier entry of the same
   * file only through its interactive tree view, which an extension command can call.
   */
  setup(home, provider, { contextWindow = 32_000, keepRecentTokens = 20_000 } = {}) {
    const agentDir = join(home, '.pi', 'agent');
    mkdirSync(agentDir, { recursive: true });
    const models = {
      providers: {
        [this.provider]: {
          baseUrl: `${provider.url}/v1`,
          api: 'openai-completions',
          apiKey: API_KEY,
          models: [{ id: this.model, contextWindow, maxTokens: 4096 }],
        },
      },
    };
    writeFileSync(join(agentDir, 'models.json'), `${JSON.stringify(models, null, 2)}\n`);
    writeFileSync(join(agentDir, 'settings.json'), `${JSON.stringify({ compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens } }, null, 2)}\n`);
    mkdirSync(join(agentDir, 'extensions'), { recursive: true });
    writeFileSync(join(agentDir, 'extensions', 'branch-at.js'), PI_BRANCH_EXTENSION);
  },
  env(home) {
    return { ...QUIET, HOME: home, PI_CODING_AGENT_DIR: join(home, '.pi', 'agent'), PI_OFFLINE: '1' };
  },
  /** `turn` (tools sent), `compaction` (a compaction or branch summary of a `<conversation>`), `side`. */
  kindOf(request) {
    const tools = request.body?.tools;
    if (Array.isArray(tools) && tools.length > 0) return 'turn';
    return /<conversation>/.test(lastUserText(request)) ? 'compaction' : 'side';
  },
  sessionsDir: (home) => join(home, '.pi', 'agent', 'sessions'),
  args: (...rest) => ['--provider', 'scripted', '--model', 'gpt-4.1', ...rest],
};

/**
 * What opencode needs to stay off the network: no models.dev catalog, no update check, no share
 * links, no default plugins, no LSP downloads, no Claude Code prompts or skills read from HOME.
 */
const OPENCODE_OFFLINE = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
};

/** opencode's data folder under a HOME (`$XDG_DATA_HOME/opencode`, XDG unset): where it keeps its sessions. */
const opencodeData = (home) => join(home, '.local', 'share', 'opencode');

/**
 * opencode (`opencode run`, and `opencode serve` for what only its API does: `/compact` is
 * `POST /session/:id/summarize`). A custom provider in ~/.config/opencode/opencode.json points
 * the AI SDK at the scripted provider: `@ai-sdk/anthropic` (Messages API, cache writes and
 * thinking) or `@ai-sdk/openai-compatible` (Chat Completions, reasoning tokens). opencode
 * installs `@opencode-ai/plugin` into its config folder from the npm registry unless the folder
 * has a node_modules and a lock naming it: setup writes both, empty, so nothing is fetched.
 */
function opencodeAgent({ name, packageName, bin }) {
  return {
    name,
    package: packageName,
    bin,
    provider: 'scripted',
    /** Writes the config (the scripted provider, its model, no sharing or updates) and the stand-in plugin install. */
    setup(home, provider, { api = 'anthropic', model = 'claude-sonnet-4-5', context = 200_000 } = {}) {
      const config = join(home, '.config', 'opencode');
      mkdirSync(join(config, 'node_modules'), { recursive: true });
      writeFileSync(join(config, 'package-lock.json'), `${JSON.stringify({ packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } }, null, 2)}\n`);
      const npm = api === 'anthropic' ? '@ai-sdk/anthropic' : '@ai-sdk/openai-compatible';
      const settings = {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        model: `${this.provider}/${model}`,
        small_model: `${this.provider}/${model}`,
        provider: {
          [this.provider]: { npm, name: 'Scripted', options: { baseURL: `${provider.url}/v1`, apiKey: API_KEY }, models: { [model]: { name: model, limit: { context, output: 4096 } } } },
        },
      };
      writeFileSync(join(config, 'opencode.json'), `${JSON.stringify(settings, null, 2)}\n`);
    },
    env(home) {
      return { ...QUIET, HOME: home, ...OPENCODE_OFFLINE };
    },
    /** `turn` (tools sent), `compaction` (the summary of the history, sent without tools), `side` (the title). */
    kindOf(request) {
      const tools = request.body?.tools;
      if (Array.isArray(tools) && tools.length > 0) return 'turn';
      // 1.18 sends the history inside `<conversation>`; 1.1 sends it as messages and asks for a prompt to continue it.
      return /<conversation>|continuing our conversation/.test(JSON.stringify(request.body?.messages ?? '')) ? 'compaction' : 'side';
    },
    sessionsDir: opencodeData,
    /** The files opencode keeps its sessions in, relative to its data folder: the database (and its WAL), or the JSON storage. */
    sessionFiles(home) {
      const data = opencodeData(home);
      return filesUnder(data)
        .filter((path) => /^opencode\.db(-wal|-shm)?$/.test(path) || /^storage\/(session|message|part)\//.test(path))
        .map((path) => ({ path, absolute: join(data, path) }));
    },
    /**
     * The sessions, as `<store>#<session id>` relative to the data folder: the database's when
     * there is one, else the JSON storage's.
     */
    sessions(home) {
      const files = this.sessionFiles(home).map((file) => file.path);
      if (files.includes('opencode.db')) return null; // listed from the database by the caller (it needs SQLite)
      return files.filter((path) => /^storage\/session\/[^/]+\/ses_[A-Za-z0-9]+\.json$/.test(path)).map((path) => `storage#${path.split('/').pop().slice(0, -5)}`);
    },
    /** The session a request belongs to: opencode 1.18 names it in `x-session-id`; 1.1 does not (one session then). */
    sessionOf(request, sessions) {
      const id = request.headers['x-session-id'];
      if (id) return sessions.find((address) => address.endsWith(`#${id}`)) ?? null;
      return sessions.length === 1 ? sessions[0] : null;
    },
  };
}

/** opencode 1.18: sessions in SQLite (`opencode.db`, WAL mode). */
export const opencode = opencodeAgent({ name: 'opencode', packageName: 'opencode-ai', bin: 'opencode' });
/** opencode 1.1: the last release here to keep sessions as JSON files (`storage/`). */
export const opencodeJson = opencodeAgent({ name: 'opencode-json', packageName: 'opencode-ai-json', bin: 'opencodeJson' });

export const AGENTS = { [claudeCode.name]: claudeCode, [codex.name]: codex, [pi.name]: pi, [opencode.name]: opencode, [opencodeJson.name]: opencodeJson };
