import { join } from 'node:path';

/**
 * A map output on disk (Spark's IndexShuffleBlockResolver): `shuffle_<shuffleId>_<mapId>_0.data`
 * holds the reducers' blocks one after another, `….index` their offsets, numPartitions + 1
 * unsigned 64-bit big-endian integers. A block is newline-terminated JSON records (docs/protocol.md).
 */
export function shuffleFiles(
  dir: string,
  shuffleId: number,
  mapId: number,
): { data: string; index: string } {
  const base = join(dir, `shuffle_${shuffleId}_${mapId}_0`);
  return { data: `${base}.data`, index: `${base}.index` };
}

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
