/**
 * Masks secrets in text before it leaves the machine or is stored: API keys (OpenAI, Anthropic,
 * AWS, GitHub, Slack, Google), JSON Web Tokens, bearer tokens, private key blocks, passwords in URLs and
 * `.env`-style assignments. Each secret becomes `[REDACTED:<kind>]`; the text around it is kept,
 * and redacting twice changes nothing. Pure. Callers decide when to apply it (`--redact`,
 * `defaultRedaction`); see README "Secrets".
 *
 * The patterns favour masking a little too much over leaking: a transcript sent to a summarizer
 * loses nothing important when a token-shaped string is masked.
 */
import type { AnyMessage, ContentBlock, SlimBlock } from '../session/model.js';
import { isSlim } from '../session/model.js';

export type SecretKind =
  | 'private-key'
  | 'url-password'
  | 'anthropic-key'
  | 'openai-key'
  | 'aws-access-key'
  | 'github-token'
  | 'slack-token'
  | 'google-api-key'
  | 'jwt'
  | 'bearer-token'
  | 'secret-assignment'
  | 'secret-parameter';

export const REDACTED_PREFIX = '[REDACTED:';

function mask(kind: SecretKind): string {
  return `${REDACTED_PREFIX}${kind}]`;
}

/** Key names whose value is a secret: the name ends with one of these words. */
const SECRET_WORDS = 'password|passwd|passphrase|secret|token|api_?key|access_?key|secret_?key|private_?key|credentials?|auth';
const QUOTED_OR_BARE = String.raw`"[^"\n]*"|'[^'\n]*'|[^\s"',;]+`;

interface Rule {
  readonly kind: SecretKind;
  readonly pattern: RegExp;
  /** Builds the replacement from the match groups; by default the whole match is masked. */
  readonly replace?: (match: string, groups: readonly string[]) => string;
}

/** Values that are already masked or are references, not secrets (`$DB_PASSWORD`, `${TOKEN}`). */
function isPlaceholder(value: string): boolean {
  const bare = value.replace(/^["']/, '');
  return bare.startsWith(REDACTED_PREFIX) || bare.startsWith('$') || bare === '' || bare === '"' || bare === "'";
}

/** `name<separator>value` with the value masked, unless it is a placeholder. */
function maskValue(kind: SecretKind, quote = ''): Rule['replace'] {
  return (match, [name, separator, value]) =>
    isPlaceholder(value ?? '') ? match : `${name}${separator}${quote}${mask(kind)}${quote}`;
}

/** Order matters: whole blocks and URLs first, then specific key shapes, then generic assignments. */
const RULES: readonly Rule[] = [
  {
    kind: 'private-key',
    // A whole PEM block, or everything after a BEGIN line when the block was cut off.
    pattern: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g,
  },
  {
    kind: 'url-password',
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]+:)([^\s/?#@]+)@/gi,
    replace: (match, [before, password]) => (isPlaceholder(password ?? '') ? match : `${before}${mask('url-password')}@`),
  },
  { kind: 'anthropic-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: 'openai-key', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { kind: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g },
  { kind: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  // A JSON Web Token anywhere (header and payload are base64url JSON, so both start with eyJ).
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/g },
  {
    // A token has a digit or a symbol in it: "Bearer authentication" is prose and stays.
    kind: 'bearer-token',
    pattern: /\b(Bearer)(\s+)((?=[A-Za-z0-9._~+/-]*[0-9._~+/-])[A-Za-z0-9._~+/-]{12,}=*)/gi,
    replace: maskValue('bearer-token'),
  },
  {
    // .env and shell: `export DB_PASSWORD=…`, `API_KEY: …`. Upper-case names only, so code such
    // as `token = next()` is left alone; `MAX_TOKENS=4096` does not end with a secret word.
    kind: 'secret-assignment',
    pattern: new RegExp(String.raw`\b([A-Z0-9_]*?(?:${SECRET_WORDS.toUpperCase()}))(\s*[=:]\s*)(${QUOTED_OR_BARE})`, 'g'),
    replace: maskValue('secret-assignment'),
  },
  {
    // Quoted keys in any case (JSON, Python dicts): `"password": "…"`, `'apiKey': '…'`.
    kind: 'secret-assignment',
    pattern: new RegExp(String.raw`(["'][\w.-]*?(?:${SECRET_WORDS})["'])(\s*:\s*)("[^"\n]*"|'[^'\n]*')`, 'gi'),
    replace: maskValue('secret-assignment', '"'),
  },
  {
    // A line of YAML, INI or .properties in any case: `password: …`, `db.password=…`.
    kind: 'secret-assignment',
    pattern: new RegExp(String.raw`^([ \t]*(?:export[ \t]+)?[\w.-]*?(?:${SECRET_WORDS}))([ \t]*=[ \t]*|:[ \t]+)(\S+)`, 'gim'),
    replace: maskValue('secret-assignment'),
  },
  {
    // URL query parameters: `?access_token=…&…`.
    kind: 'secret-parameter',
    pattern: /([?&](?:access_token|token|api_?key|key|secret|password|passwd|client_secret|sig|signature))(=)([^&#\s"']+)/gi,
    replace: maskValue('secret-parameter'),
  },
];

/** The text with every secret masked. */
export function redactText(text: string): string {
  let result = text;
  for (const rule of RULES) {
    result = result.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      if (!rule.replace) return mask(rule.kind);
      // `rest` is the capture groups, then the offset (the first number), the input…
      const groups = rest.slice(0, rest.findIndex((item) => typeof item === 'number')).map((group) => (typeof group === 'string' ? group : ''));
      return rule.replace(match, groups);
    });
  }
  return result;
}

/** A JSON value (tool arguments) with every string in it redacted, keys included. */
function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redactText(key), redactValue(inner)]));
  }
  return value;
}

function redactBlock(block: ContentBlock): ContentBlock {
  switch (block.type) {
    case 'text':
    case 'thinking':
      return { ...block, text: redactText(block.text) };
    case 'tool_request':
      return { ...block, arguments: redactValue(block.arguments) as Record<string, unknown> };
    case 'tool_result':
      return { ...block, output: redactText(block.output) };
  }
}

/** A slim message has no text to mask: only its file arguments. */
function redactSlimBlock(block: SlimBlock): SlimBlock {
  return block.type === 'tool_request' ? { ...block, arguments: redactValue(block.arguments) as Record<string, unknown> } : block;
}

/** The messages with every text, tool argument and tool output redacted; ids and roles kept. */
export function redactMessages<M extends AnyMessage>(messages: readonly M[]): M[] {
  return messages.map(redactMessage);
}

/** One message with its secrets masked (redactMessages of one). */
export function redactMessage<M extends AnyMessage>(message: M): M {
  // Blocks keep their kind: a slim message stays one.
  const redacted: AnyMessage = isSlim(message) ? { ...message, content: message.content.map(redactSlimBlock) } : { ...message, content: message.content.map(redactBlock) };
  return redacted as M;
}

/** Is this endpoint on this machine (loopback)? Anything else counts as leaving the machine. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * Whether to redact when the user did not say (`--redact` / `--no-redact` always win): on when a
 * transcript is sent to an endpoint off this machine, off for offline strategies (`endpoint`
 * null) and loopback servers.
 */
export function defaultRedaction(endpoint: string | null): boolean {
  return endpoint !== null && !isLoopbackUrl(endpoint);
}

/** `--redact` as given, else the default for where the transcript goes. */
export function shouldRedact(flag: boolean | undefined, endpoint: string | null): boolean {
  return flag ?? defaultRedaction(endpoint);
}
