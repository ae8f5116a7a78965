/**
 * The Python executor's shuffle (examples/python/wick_shuffle.py, wick_tasks.py) against Wick's
 * own, in both directions: a map output written by Wick's shuffle writer is read by Python
 * (index, blocks, CRC-32s, records, each in the reducer Python's partitioner picks) and one
 * written by a Python map task is read here; and blocks travel between a Python and a
 * JavaScript ShuffleBlockServer and fetcher, chunk by chunk, proving the application's key,
 * with a wrong CRC-32 or a missing map output failing as FetchFailed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { crc32 } from 'node:zlib';
import {
  FetchFailedError,
  fetchShuffleBlocks,
} from '../../backend/app/executor/fetchShuffleBlocks.js';
import { parseBlock, shuffleFiles } from '../../backend/app/shuffle/blocks.js';
import { canonicalJson, hashKey } from '../../backend/app/shuffle/keys.js';
import { partitionFunction } from '../../backend/app/shuffle/partitioners.js';
import { emitShuffle } from '../../backend/app/task/shuffleRead.js';
import { shuffleWriter } from '../../backend/app/task/shuffleWrite.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import type { MapStatus } from '../../backend/protocol/shuffle.js';
import { SHUFFLE_ENDPOINT } from '../../backend/protocol/shuffle.js';
import type { TaskDescription } from '../../backend/protocol/task.js';
import { AppKeyRing, parseCredential } from '../../backend/rpc/credentials.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import { ShuffleBlockServer } from '../../backend/shuffle/ShuffleBlockServer.js';
import { repoRoot } from '../helpers/cli.js';

const pyDir = join(repoRoot, 'examples', 'python');
const root = mkdtempSync(join(tmpdir(), 'wick-test-pyshuffle-'));
after(() => rmSync(root, { recursive: true, force: true }));

const SHUFFLE = 3;
const REDUCERS = 4;
const APP = 'app-pyshuffle-test';
const KEY = randomBytes(32).toString('hex');
const CREDENTIAL = `app:${APP}:${KEY}`;

/** [key, value] records with keys of every JSON type, several values per key. */
function records(): [unknown, number][] {
  const keys: unknown[] = [
    'word',
    'é',
    '😀',
    '\ud800',
    1,
    1.5,
    -0,
    1e21,
    2 ** 60,
    null,
    true,
    false,
    [1, 'a'],
    { b: 1, a: [null] },
  ];
  const out: [unknown, number][] = [];
  for (let i = 0; i < 200; i++) out.push([keys[i % keys.length], i]);
  return out;
}

function task(partition: number, action: TaskDescription['action']): TaskDescription {
  return {
    taskId: partition,
    jobId: 0,
    stageId: 0,
    partition,
    attempt: 0,
    source: { kind: 'array', data: records() },
    transformations: [],
    action,
  };
}

/** Runs a Python program with examples/python on its path; its stdout as JSON. */
function python(program: string, input: unknown): unknown {
  const run = spawnSync(
    'python3',
    ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(pyDir)})\n${program}`],
    {
      input: JSON.stringify(input),
      encoding: 'utf8',
    },
  );
  assert.equal(run.status, 0, `python3 failed:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** A map output read straight from its files, as a reducer's blocks. */
function readOutput(dir: string, mapId: number): Buffer[] {
  const files = shuffleFiles(dir, SHUFFLE, mapId);
  const index = readFileSync(files.index);
  const data = readFileSync(files.data);
  assert.equal(index.length, 8 * (REDUCERS + 1));
  return Array.from({ length: REDUCERS }, (_, r) =>
    data.subarray(Number(index.readBigUInt64BE(8 * r)), Number(index.readBigUInt64BE(8 * r + 8))),
  );
}

const jsDir = join(root, 'js');
const pyOut = join(root, 'py');
let jsStatus: MapStatus;
let pyStatus: MapStatus;

test('a map output Wick wrote is read by Python, and one Python wrote by Wick', async () => {
  const w = shuffleWriter(
    {
      kind: 'shuffleWrite',
      shuffleId: SHUFFLE,
      numPartitions: REDUCERS,
      partitioner: { kind: 'hash' },
    },
    task(5, {
      kind: 'shuffleWrite',
      shuffleId: SHUFFLE,
      numPartitions: REDUCERS,
      partitioner: { kind: 'hash' },
    }),
    { appDir: root, shuffleDir: jsDir, shuffleLocation: 'js-host:1', executorId: 'js' },
    () => {
      throw new Error('no functions without an aggregator');
    },
  );
  for (const r of records()) w.push(r);
  jsStatus = await w.result();

  const read = python(
    `
import json, struct, zlib
from wick_keys import canonical_json, partition_function
from wick_shuffle import parse_block, shuffle_files
a = json.loads(sys.stdin.read())
data, index = shuffle_files(a["dir"], a["shuffle"], 5)
offsets = struct.unpack(">%dQ" % (a["reducers"] + 1), open(index, "rb").read())
raw = open(data, "rb").read()
part = partition_function({"kind": "hash"}, a["reducers"], 5)
out = []
for r in range(a["reducers"]):
    block = raw[offsets[r]:offsets[r + 1]]
    recs = parse_block(block)
    out.append({"size": len(block), "crc32": zlib.crc32(block), "partitions": [part(x) for x in recs],
                "records": [canonical_json(x) for x in recs]})
print(json.dumps(out))
`,
    { dir: jsDir, shuffle: SHUFFLE, reducers: REDUCERS },
  ) as { size: number; crc32: number; partitions: number[]; records: string[] }[];
  const part = partitionFunction({ kind: 'hash' }, REDUCERS, 5);
  const want: string[][] = Array.from({ length: REDUCERS }, () => []);
  for (const r of records()) want[part(r)]?.push(canonicalJson(r));
  for (const [r, b] of read.entries()) {
    assert.equal(b.size, jsStatus.sizes[r], `reducer ${r}'s size`);
    assert.equal(b.crc32, jsStatus.crc32s[r], `reducer ${r}'s CRC-32`);
    assert.deepEqual(b.records, want[r], `reducer ${r}'s records, in order`);
    assert.ok(
      b.partitions.every((p) => p === r),
      `Python sends reducer ${r}'s records to ${r}`,
    );
  }
  assert.ok(want.filter((w) => w.length > 0).length >= 3, 'the keys spread over the reducers');

  // A Python map task, combining map-side with "add" (reduceByKey(add)).
  pyStatus = python(
    `
import json
from wick_tasks import run_task
a = json.loads(sys.stdin.read())
print(json.dumps(run_task(a["task"], a["place"])))
`,
    {
      task: task(6, {
        kind: 'shuffleWrite',
        shuffleId: SHUFFLE,
        numPartitions: REDUCERS,
        partitioner: { kind: 'hash' },
        aggregator: { mergeValue: { source: 'add' }, mergeCombiners: { source: 'add' } },
        mapSideCombine: true,
      }),
      place: { shuffleDir: pyOut, shuffleLocation: 'py-host:2', executorId: 'py' },
    },
  ) as MapStatus;
  const sums = new Map<string, number>();
  for (const [k, v] of records()) sums.set(canonicalJson(k), (sums.get(canonicalJson(k)) ?? 0) + v);
  assert.equal(pyStatus.records, sums.size, 'one record per key');
  assert.equal(pyStatus.location, 'py-host:2');
  const got = new Map<string, number>();
  for (const [r, block] of readOutput(pyOut, 6).entries()) {
    assert.equal(block.length, pyStatus.sizes[r], `reducer ${r}'s size`);
    assert.equal(crc32(block) >>> 0, pyStatus.crc32s[r], `reducer ${r}'s CRC-32`);
    parseBlock(block, (rec) => {
      const [k, v] = rec as [unknown, number];
      assert.equal(hashKey(k) % REDUCERS, r, `${canonicalJson(k)} is in reducer ${r}`);
      assert.ok(!got.has(canonicalJson(k)), `${canonicalJson(k)} once`);
      got.set(canonicalJson(k), v);
    });
  }
  assert.deepEqual(got, sums);
});

test('blocks travel between Python and Wick servers and fetchers, in chunks, with the app key', {
  timeout: 60_000,
}, async () => {
  assert.ok(jsStatus && pyStatus, 'the test above wrote the map outputs');
  const credential = parseCredential(CREDENTIAL);
  const keys = new AppKeyRing();
  keys.add(APP, KEY);
  const server = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'jsShuffle',
    host: '127.0.0.1',
    auth: { credential, keys },
  });
  server.setupEndpoint(
    SHUFFLE_ENDPOINT,
    new ShuffleBlockServer(() => ({ dir: jsDir, where: 'the JS server' })),
  );
  const client = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'jsReducer',
    clientMode: true,
    auth: { credential, keys: undefined },
  });
  // A Python shuffle server over the Python map output, as the executor starts it.
  const py = spawn(
    'python3',
    [
      '-c',
      `
import sys, threading
sys.path.insert(0, ${JSON.stringify(pyDir)})
from wick_auth import handed_credential
from wick_rpc import RpcEnv
from wick_shuffle import SHUFFLE_ENDPOINT, ShuffleBlockServer, fetch_block, FetchFailed
import json
cred = handed_credential()
env = RpcEnv("pyShuffle", host="127.0.0.1", port=0, credential=cred,
             keys=lambda kind, ident: cred.key if (kind, ident) == ("app", cred.id) else None)
env.setup_endpoint(SHUFFLE_ENDPOINT, ShuffleBlockServer(sys.argv[1]))
print(env.address, flush=True)
client = RpcEnv("pyReducer", credential=cred)
for line in sys.stdin:
    a = json.loads(line)
    try:
        block = fetch_block(client, a["shuffle"], a["reduce"], a["block"], chunk=a["chunk"])
        out = {"ok": block.hex()}
    except FetchFailed as e:
        out = {"failed": str(e), "fetchFailed": e.fetch_failed}
    print(json.dumps(out), flush=True)
client.stop()
env.stop()
`,
      pyOut,
    ],
    {
      env: { ...process.env, WICK_APP_CREDENTIAL: CREDENTIAL },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  let waiting: (() => void) | undefined;
  let buf = '';
  py.stdout.setEncoding('utf8').on('data', (s: string) => {
    buf += s;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      waiting?.();
    }
  });
  py.on('exit', () => waiting?.());
  const nextLine = async (): Promise<string> => {
    while (lines.length === 0) {
      if (py.exitCode !== null) throw new Error(`the Python peer exited with ${py.exitCode}`);
      await new Promise<void>((resolve) => {
        waiting = resolve;
      });
    }
    return lines.shift() as string;
  };
  const ask = async (a: unknown) => {
    py.stdin.write(`${JSON.stringify(a)}\n`);
    return JSON.parse(await nextLine()) as { ok?: string; failed?: string; fetchFailed?: unknown };
  };
  try {
    const pyAddress = await nextLine();
    // Wick's fetcher reads the Python server's blocks (1 MiB chunks; the blocks are small).
    const pyBlocks = readOutput(pyOut, 6);
    for (let r = 0; r < REDUCERS; r++) {
      const ref = {
        location: pyAddress,
        executorId: 'py',
        mapId: 6,
        size: pyStatus.sizes[r] as number,
        crc32: pyStatus.crc32s[r] as number,
      };
      const [got] = await fetchShuffleBlocks(client, SHUFFLE, r, [ref]);
      assert.deepEqual(Buffer.from(got as Uint8Array), pyBlocks[r], `reducer ${r} from Python`);
    }
    await assert.rejects(
      fetchShuffleBlocks(client, SHUFFLE, 0, [
        { location: pyAddress, executorId: 'py', mapId: 99, size: 10, crc32: 0 },
      ]),
      (e: Error) => e instanceof FetchFailedError && /No block shuffle_3_99_0 here/.test(e.message),
    );

    // Python's fetcher reads Wick's server's blocks, 7 bytes a chunk.
    const jsBlocks = readOutput(jsDir, 5);
    for (let r = 0; r < REDUCERS; r++) {
      const block = {
        location: server.address,
        executorId: 'js',
        mapId: 5,
        size: jsStatus.sizes[r],
        crc32: jsStatus.crc32s[r],
      };
      const got = await ask({ shuffle: SHUFFLE, reduce: r, block, chunk: 7 });
      assert.equal(got.ok, jsBlocks[r]?.toString('hex'), `reducer ${r} from Wick`);
    }
    const bad = {
      location: server.address,
      executorId: 'js',
      mapId: 5,
      size: jsStatus.sizes[0],
      crc32: 1,
    };
    const corrupt = await ask({ shuffle: SHUFFLE, reduce: 0, block: bad, chunk: 1024 });
    assert.match(
      corrupt.failed ?? '',
      /Block shuffle_3_5_0 from executor js .* is corrupt: its CRC-32 is \d+, 1 expected/,
    );
    assert.deepEqual(corrupt.fetchFailed, { shuffleId: SHUFFLE, mapId: 5, executorId: 'js' });
    const short = { ...bad, size: (jsStatus.sizes[0] as number) + 1 };
    const cut = await ask({ shuffle: SHUFFLE, reduce: 0, block: short, chunk: 1024 });
    assert.match(cut.failed ?? '', /its size is \d+ bytes on the server, \d+ expected/);
    const missing = { ...bad, mapId: 42 };
    const none = await ask({ shuffle: SHUFFLE, reduce: 0, block: missing, chunk: 1024 });
    assert.match(none.failed ?? '', /No block shuffle_3_42_0 here/);

    // Without the application's key the Python server lets nobody in.
    const stranger = await RpcEnv.create({
      protocol: wickProtocol,
      name: 'stranger',
      clientMode: true,
      auth: { credential: undefined, keys: undefined },
    });
    try {
      await assert.rejects(
        fetchShuffleBlocks(stranger, SHUFFLE, 0, [
          { location: pyAddress, executorId: 'py', mapId: 6, size: 1, crc32: 0 },
        ]),
        (e: Error) => e instanceof FetchFailedError && /auth|secret|key/i.test(e.message),
      );
    } finally {
      await stranger.stop();
    }
  } finally {
    py.stdin.end();
    await new Promise((resolve) => (py.exitCode !== null ? resolve(null) : py.on('exit', resolve)));
    await client.stop();
    await server.stop();
  }
});

test('a Python reducer combines, groups and sorts a shuffle as Wick’s reducer does', () => {
  assert.ok(jsStatus, 'the first test wrote the map output');
  // Two map outputs' blocks for one reducer: every record, split in two blocks.
  const all = readOutput(jsDir, 5);
  const blocks = [Buffer.concat(all.slice(0, 2)), Buffer.concat(all.slice(2))];
  const refs = blocks.map((b, mapId) => ({
    location: 'h:1',
    executorId: 'js',
    mapId,
    size: b.length,
    crc32: crc32(b) >>> 0,
  }));
  const byName: Record<string, (...a: unknown[]) => unknown> = {
    add: (a, b) => (a as number) + (b as number),
    'list-of': (v) => [v],
    append: (c, v) => {
      (c as unknown[]).push(v);
      return c;
    },
    concat: (a, b) => (a as unknown[]).concat(b as unknown[]),
  };
  const fn = (spec: { source: string }) => byName[spec.source] as (...a: unknown[]) => unknown;
  const group = {
    createCombiner: { source: 'list-of' },
    mergeValue: { source: 'append' },
    mergeCombiners: { source: 'concat' },
  };
  const add = { mergeValue: { source: 'add' }, mergeCombiners: { source: 'add' } };
  const sources = [
    { aggregator: group },
    { aggregator: add, ascending: true },
    { aggregator: group, ascending: false },
    { ascending: true },
    { ascending: false },
    {},
  ].map((extra) => ({
    kind: 'shuffle' as const,
    shuffleId: SHUFFLE,
    reduceId: 0,
    blocks: refs,
    ...extra,
  }));
  const py = python(
    `
import base64, json
from wick_keys import canonical_json
from wick_tasks import shuffle_records
a = json.loads(sys.stdin.read())
blocks = [base64.b64decode(b) for b in a["blocks"]]
print(json.dumps([[canonical_json(r) for r in shuffle_records(s, blocks)] for s in a["sources"]]))
`,
    { blocks: blocks.map((b) => b.toString('base64')), sources },
  ) as string[][];
  for (const [i, src] of sources.entries()) {
    const js: string[] = [];
    emitShuffle(
      src,
      { blocks },
      fn,
      (r) => js.push(canonicalJson(r)),
      () => false,
      // Far above these blocks: the reducer's in-memory path, as the Python one has.
      { dir: tmpdir(), taskId: 0, threshold: 1 << 30, metrics: {} },
    );
    assert.ok(js.length >= 10, `records of source ${i}`);
    // Without a sort the order of the keys is each reducer's own; with one it is the key order.
    const order =
      src.ascending === undefined ? (xs: string[]) => [...xs].sort() : (xs: string[]) => xs;
    assert.deepEqual(
      order(py[i] as string[]),
      order(js),
      `source ${i}: ${JSON.stringify({ ...src, blocks: undefined })}`,
    );
  }
});
