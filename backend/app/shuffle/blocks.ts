/** The file names of a map output, shared with the worker's shuffle service (backend/shuffle). */
export { shuffleFiles } from '../../shuffle/blockFiles.js';

/** The records of one block: newline-terminated JSON texts. */
export function parseBlock(block: Uint8Array, each: (record: unknown) => void): void {
  const text = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('utf8');
  let from = 0;
  for (;;) {
    const nl = text.indexOf('\n', from);
    if (nl < 0) break;
    if (nl > from) each(JSON.parse(text.slice(from, nl)));
    from = nl + 1;
  }
  if (from < text.length) throw new Error('A shuffle block ends inside a record (truncated)');
}
