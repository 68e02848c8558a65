/**
 * Where the summarizer's requests go and how long they may take: the endpoint settings the chat
 * client is made with and that its error messages name. Types only.
 */

/** What the client needs of the summarizer's settings (config/summarizer.ts resolves them all). */
export interface EndpointSettings {
  readonly baseUrl: string;
  readonly model: string;
  /** Name of the environment variable that holds the key (never the key), for error messages. */
  readonly apiKeyEnv: string;
  readonly timeoutMs: number;
  /** Retries on 408/409/429/5xx and connection errors (made by this client: retry.ts). */
  readonly maxRetries: number;
}
