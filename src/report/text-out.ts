/**
 * Text written to a stream in pieces of about `size` characters: a view printed message by
 * message, or a request body block by block, would otherwise cost a write (a system call, since
 * stdout to a file or a pipe writes synchronously) for every small piece.
 */
export interface TextOut {
  write(text: string): void;
  /** Writes what is still gathered, and resolves once stdout took it (after a drain if it is full). */
  close(): Promise<void>;
}

export function textOut(out: NodeJS.WritableStream = process.stdout, size = 1 << 16): TextOut {
  let pieces: string[] = [];
  let gathered = 0;
  const flush = () => {
    if (pieces.length === 0) return;
    out.write(pieces.length === 1 ? pieces[0]! : pieces.join(''));
    pieces = [];
    gathered = 0;
  };
  return {
    write(text) {
      pieces.push(text);
      gathered += text.length;
      if (gathered >= size) flush();
    },
    close: () => {
      flush();
      return new Promise((resolve) => {
        if ((out as NodeJS.WriteStream).writableNeedDrain) out.once('drain', () => resolve());
        else resolve();
      });
    },
  };
}
