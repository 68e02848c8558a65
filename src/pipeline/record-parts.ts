/**
 * Per-session records written as their sessions' tasks make them, still in input order and each
 * session's lines whole. A long session's `replay --json` record (68 MB of JSON under a preset on
 * the 909 MB canonical session) was held whole as bytes until the session's result came back;
 * now the parts of the session printed next are written as they come, and a later session's
 * wait until every session before it is printed.
 *
 * A session's parts are its warnings (printed before its record, as the frame prints them), then
 * its record's pieces. A task sends them only once everything that can fail its session has run,
 * so a failure comes before any part; only a worker that dies as it writes (killed, out of
 * memory) can leave a record cut short, and the line is then ended there so that its failure is
 * a line of its own. A Ctrl-C or SIGTERM while a line is open waits for it to be whole
 * (interrupt.ts openRecordLine), so an interrupted run prints no half record either.
 */
import type { Diagnostic } from '../session/model.js';
import type { SessionInput } from '../read/input.js';
import type { PartSink } from '../workers/task.js';
import type { Outcome } from './batch.js';
import { closeRecordLine, openRecordLine } from './interrupt.js';
import type { CommandOutput } from './output.js';

/**
 * A session's warnings, or a piece of its record's JSON text. Text, not bytes: a buffer moved
 * to this thread is freed only when this thread collects its garbage, and its heap being small,
 * V8 let the buffers of written pieces add up to 64 MB first (262 MB peak RSS against 215 as
 * text on the 909 MB session's `replay --policy pi --json`); a string counts in the heap.
 */
export type RecordPart = { readonly warnings: readonly (Diagnostic | string)[] } | string;

export class RecordParts {
  private readonly positions = new Map<string, number>();
  /** The position of the session printed next: its parts are written as they come. */
  private next = 0;
  /** Later sessions' parts, until their turn. */
  private readonly held = new Map<number, RecordPart[]>();
  /** Whether the session printed next has written a piece of its record (its line is open). */
  private open = false;

  constructor(
    inputs: readonly SessionInput[],
    private readonly output: CommandOutput,
  ) {
    inputs.forEach((input, position) => this.positions.set(input.path, position));
  }

  /** Where the session `input` sends its parts. */
  sink(input: SessionInput): PartSink<RecordPart> {
    const position = this.positionOf(input.path);
    return (part) => {
      if (position === this.next) return this.write(part);
      const held = this.held.get(position);
      if (held) held.push(part);
      else this.held.set(position, [part]);
    };
  }

  /** The frame's `emit` (outcomes in input order), which also hands the turn to the next session. */
  emit<Result>(emit: (outcome: Outcome<Result>) => void): (outcome: Outcome<Result>) => void {
    return (outcome) => {
      const position = this.positionOf(outcome.path);
      if (position !== this.next) {
        // The sessions in between were abandoned (an interrupted run): nothing more of theirs is printed.
        if (this.open) this.output.rendered([]);
        for (let skipped = this.next + 1; skipped < position; skipped++) this.held.delete(skipped);
        this.turnTo(position);
      }
      if (!outcome.ok && this.open) this.output.rendered([]);
      emit(outcome);
      this.turnTo(position + 1);
    };
  }

  private turnTo(position: number): void {
    this.held.delete(this.next);
    this.next = position;
    if (this.open) closeRecordLine();
    this.open = false;
    const waiting = this.held.get(position);
    this.held.delete(position);
    waiting?.forEach((part) => this.write(part));
  }

  private write(part: RecordPart): void {
    if (typeof part === 'string') {
      if (!this.open) openRecordLine();
      this.output.piece(part);
      this.open = true;
    } else part.warnings.forEach((warning) => this.output.warn(warning));
  }

  private positionOf(path: string): number {
    const position = this.positions.get(path);
    if (position === undefined) throw new Error(`internal: ${path} is not among the run's sessions`);
    return position;
  }
}
