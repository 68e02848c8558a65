/**
 * Is an endpoint's error a context overflow (the prompt did not fit)? Known messages from
 * OpenAI, Anthropic, Google, local servers and proxies, and HTTP 400/413 with no
 * body at all (some proxies send nothing else). Pure: the client hands in the status and the error text.
 */

/** Matched case-insensitively against the error message, code and type. */
export const OVERFLOW_PATTERNS: readonly RegExp[] = [
  // OpenAI, Azure OpenAI, vLLM, OpenRouter, Groq
  /context_length_exceeded/i,
  /maximum context length/i,
  /reduce the length of the messages/i,
  /context length exceeded/i,
  // Anthropic (native and OpenAI-compatible)
  /prompt is too long/i,
  /input length and `?max_tokens`? exceed context limit/i,
  /exceeds? the context window/i,
  // Google Gemini
  /input token count.*exceeds the maximum/i,
  /exceeds the maximum number of tokens/i,
  // llama.cpp server (with or without context shift, and its error type), Ollama, LM Studio
  /exceeds the available context size/i,
  /is larger than the max context size/i,
  /exceed_context_size_error/i,
  /context size has been exceeded/i,
  /input length exceeds the maximum/i,
  // Mistral, Cohere and generic gateways
  /too large for model with \d+ maximum context length/i,
  /too many tokens/i,
  /token limit exceeded/i,
  /request entity too large/i,
  /payload too large/i,
];

/**
 * llama.cpp's server (and Hugging Face TEI) answer a prompt longer than their physical batch
 * with HTTP 500 and this text. Matched only on a 500, and only this wording: any other 500 is a
 * server error that the transport retries.
 */
export const BATCH_OVERFLOW_500 = /input \(\d+ tokens\) is too large to process/i;

export interface EndpointFailure {
  /** HTTP status, or undefined for a connection-level failure. */
  readonly status: number | undefined;
  /** True when the response had no body at all. */
  readonly emptyBody: boolean;
  /** The error's message, code and type, as the endpoint sent them. */
  readonly text: string;
}

/** A 500 that says the prompt was larger than the server's batch: retrying the same prompt cannot help. */
export function isBatchOverflow(status: number | undefined, text: string): boolean {
  return status === 500 && BATCH_OVERFLOW_500.test(text);
}

export function isContextOverflow(failure: EndpointFailure): boolean {
  if (failure.status === undefined) return false;
  if (failure.emptyBody && (failure.status === 400 || failure.status === 413)) return true;
  if (failure.status === 413) return true;
  if (isBatchOverflow(failure.status, failure.text)) return true;
  return OVERFLOW_PATTERNS.some((pattern) => pattern.test(failure.text));
}
