/**
 * The calls of one Claude Code read, each named once by a number: its key (`message.id` +
 * `requestId`, or the file and line of a call without an id: claude-code-spend.ts `callKey`) is
 * kept once, and the chain (a response's lines) and the spend (what it billed) find it by that
 * number. Each kept a table of the keys of its own: one for the two is about 40 bytes a call less
 * (50,000 calls in a 1 GB session), and lets the chain mark the context's calls in a byte array
 * where it built a set of their keys.
 */
export class CallKeys {
  private readonly keys: string[] = [];
  private readonly indexes = new Map<string, number>();

  get size(): number {
    return this.keys.length;
  }

  /** The number of `key`, given it if it has none yet. */
  add(key: string): number {
    const known = this.indexes.get(key);
    if (known !== undefined) return known;
    const index = this.keys.push(key) - 1;
    this.indexes.set(key, index);
    return index;
  }

  /** The number of `key`, or -1 when no call has it. */
  find(key: string): number {
    return this.indexes.get(key) ?? -1;
  }

  key(index: number): string {
    return this.keys[index]!;
  }
}
