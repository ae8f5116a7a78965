/** The file names of a map output, shared with the worker's shuffle service (backend/shuffle). */
export { shuffleFiles } from '../../shuffle/blockFiles.js';

/**
 * The records of one block: newline-terminated JSON texts, each with the length of its text (what
 * a spilling reader estimates its memory by). Returns how many there were.
 */
export function parseBlock(
  block: Uint8Array,
  each: (record: unknown, length: number) => void,
): number {
  const text = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('utf8');
  const { records, rest } = parseLines(text, each);
  if (rest < text.length) throw new Error('A shuffle block ends inside a record (truncated)');
  return records;
}

/**
 * The complete lines of `text` as JSON records; `rest` is where the unfinished last line begins
 * (text.length when the text ends with a newline), for a reader that goes on with the next chunk.
 */
export function parseLines(
  text: string,
  each: (record: unknown, length: number) => void,
): { records: number; rest: number } {
  let from = 0;
  let records = 0;
  for (;;) {
    const nl = text.indexOf('\n', from);
    if (nl < 0) break;
    if (nl > from) {
      each(JSON.parse(text.slice(from, nl)), nl - from);
      records++;
    }
    from = nl + 1;
  }
  return { records, rest: from };
}
