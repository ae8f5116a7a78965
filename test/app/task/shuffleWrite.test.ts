/**
 * A map task's shuffle write with a tiny spill threshold against the same write without spills:
 * each reducer's block holds the same records (or, combined map-side, the same combined values
 * once its combiners are merged, as the reducer merges them), its MapStatus's sizes and CRC-32s
 * are the data file's, the spills are counted, and no spill file is left.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { parseBlock, shuffleFiles } from '../../../backend/app/shuffle/blocks.js';
import { canonicalJson } from '../../../backend/app/shuffle/keys.js';
import { spillDirOf } from '../../../backend/app/shuffle/spillFiles.js';
import type { TaskPlace } from '../../../backend/app/task/compile.js';
import { shuffleWriter } from '../../../backend/app/task/shuffleWrite.js';
import type {
  FunctionSpec,
  PartitionAction,
  TaskDescription,
  TaskMetrics,
} from '../../../backend/protocol/task.js';

const root = mkdtempSync(join(tmpdir(), 'wick-test-shufflewrite-'));
after(() => rmSync(root, { recursive: true, force: true }));
let nextDir = 0;

const fn = (spec: FunctionSpec) =>
  new Function(`return (${spec.source})`)() as (...a: unknown[]) => unknown;
const SUM = {
  mergeValue: { source: '(a, b) => a + b' },
  mergeCombiners: { source: '(a, b) => a + b' },
};

async function write(
  records: unknown[],
  n: number,
  combine: boolean,
  threshold: number,
): Promise<{ blocks: unknown[][]; metrics: TaskMetrics; spillDir: string }> {
  const shuffleDir = join(root, String(nextDir++));
  const place: TaskPlace = {
    appDir: root,
    shuffleDir,
    shuffleLocation: '127.0.0.1:1',
    executorId: '0',
    spillThreshold: threshold,
  };
  const a = {
    kind: 'shuffleWrite',
    shuffleId: 3,
    numPartitions: n,
    partitioner: { kind: 'hash' },
    ...(combine ? { aggregator: SUM, mapSideCombine: true } : {}),
  } as Extract<PartitionAction, { kind: 'shuffleWrite' }>;
  const metrics: TaskMetrics = {};
  const w = shuffleWriter(a, { taskId: 7, partition: 2 } as TaskDescription, place, fn, metrics);
  for (const r of records) w.push(r);
  const status = await w.result();
  const files = shuffleFiles(shuffleDir, 3, 2);
  const data = readFileSync(files.data);
  const index = readFileSync(files.index);
  const blocks: unknown[][] = [];
  for (let i = 0; i < n; i++) {
    const from = Number(index.readBigUInt64BE(8 * i));
    const to = Number(index.readBigUInt64BE(8 * (i + 1)));
    const block = data.subarray(from, to);
    assert.equal(status.sizes[i], block.length, `reducer ${i}'s size`);
    assert.equal(status.crc32s[i], crc32(block) >>> 0, `reducer ${i}'s CRC-32`);
    const rs: unknown[] = [];
    parseBlock(block, (r) => rs.push(r));
    blocks.push(rs);
  }
  assert.equal(metrics.shuffleWrite?.bytesWritten, data.length);
  return { blocks, metrics, spillDir: spillDirOf(shuffleDir) };
}

const bag = (xs: unknown[]) => xs.map((x) => canonicalJson(x)).sort();
/** A block's combiners merged per key, as a reducer merges them. */
function merged(block: unknown[]): string[] {
  const m = new Map<string, [unknown, number]>();
  for (const r of block) {
    const [k, v] = r as [unknown, number];
    const had = m.get(canonicalJson(k));
    if (had) had[1] += v;
    else m.set(canonicalJson(k), [k, v]);
  }
  return bag([...m.values()]);
}
const leftovers = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

const pairs = fc.array(
  fc.tuple(
    fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.integer({ min: 0, max: 30 }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    fc.integer({ min: -9, max: 9 }),
  ),
  { minLength: 0, maxLength: 400 },
);

test('spilled or not, every reducer gets the same records (no map-side combine)', async () => {
  await fc.assert(
    fc.asyncProperty(pairs, fc.integer({ min: 1, max: 5 }), async (records, n) => {
      const plain = await write(records, n, false, 1 << 30);
      const spilled = await write(records, n, false, 300);
      assert.equal(plain.metrics.spillCount, undefined);
      for (let i = 0; i < n; i++)
        assert.deepEqual(bag(spilled.blocks[i] ?? []), bag(plain.blocks[i] ?? []));
      assert.equal(spilled.metrics.shuffleWrite?.recordsWritten, records.length);
      if (records.length >= 20) assert.ok((spilled.metrics.spillCount ?? 0) > 0, 'it spilled');
      assert.deepEqual(leftovers(spilled.spillDir), []);
    }),
    { numRuns: 40, seed: 13 },
  );
});

test('spilled or not, every reducer gets the same sums once merged (map-side combine)', async () => {
  await fc.assert(
    fc.asyncProperty(pairs, fc.integer({ min: 1, max: 5 }), async (records, n) => {
      const plain = await write(records, n, true, 1 << 30);
      const spilled = await write(records, n, true, 1);
      for (let i = 0; i < n; i++)
        assert.deepEqual(merged(spilled.blocks[i] ?? []), merged(plain.blocks[i] ?? []));
      assert.deepEqual(leftovers(spilled.spillDir), []);
    }),
    { numRuns: 40, seed: 14 },
  );
});

test('a map-side combine that spills counts its spills and their bytes', async () => {
  const records = Array.from({ length: 5000 }, (_, i) => [`k${i % 1000}`, 1]);
  const { blocks, metrics, spillDir } = await write(records, 3, true, 4096);
  assert.ok((metrics.spillCount ?? 0) >= 2, `spills: ${metrics.spillCount}`);
  assert.ok((metrics.diskBytesSpilled ?? 0) > 0);
  assert.ok((metrics.memoryBytesSpilled ?? 0) >= 4096);
  const total = blocks.flatMap(merged).length;
  assert.equal(total, 1000);
  assert.deepEqual(leftovers(spillDir), []);
});

test('a record that is not a pair fails the task and says what it got', async () => {
  await assert.rejects(
    write([[1, 2], 'lone'], 2, false, 1 << 30),
    /expects \[key, value\] elements, got "lone"/,
  );
});
