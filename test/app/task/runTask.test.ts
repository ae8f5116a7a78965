/**
 * What an executor's pool thread does with one task, run here in the test process: functions are
 * prepared as the driver ships them (prepareFunction) and compiled as the executor does
 * (FunctionCompiler), then runTask streams the partition through them into the action.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { prepareFunction } from '../../../backend/app/closure.js';
import { FunctionCompiler } from '../../../backend/app/task/compile.js';
import { runTask } from '../../../backend/app/task/runTask.js';
import type {
  PartitionAction,
  PartitionSource,
  TaskDescription,
  Transformation,
} from '../../../backend/protocol/task.js';

const appDir = mkdtempSync(join(tmpdir(), 'wick-test-runtask-'));
after(() => rmSync(appDir, { recursive: true, force: true }));
writeFileSync(join(appDir, 'helper.cjs'), 'exports.double = (x) => x * 2;\n');
writeFileSync(join(appDir, 'helper.mjs'), 'export const triple = (x) => x * 3;\n');
const compiler = new FunctionCompiler({ appDir });

/** Counters the shipped functions bump through globalThis: they run in this very context. */
const g = globalThis as unknown as { wickCalls: number; wickSeen: unknown[] };

type Step = [Transformation['kind'], unknown, unknown?];

function run(
  source: PartitionSource,
  steps: Step[],
  action: PartitionAction = { kind: 'collect' },
): Promise<unknown> {
  const task: TaskDescription = {
    taskId: 0,
    jobId: 0,
    stageId: 0,
    partition: 0,
    attempt: 0,
    source,
    transformations: steps.map(([kind, f, env]) => ({ kind, fn: prepareFunction(f, kind, env) })),
    action,
  };
  return runTask(task, compiler);
}

const array = (data: unknown[]): PartitionSource => ({ kind: 'array', data });
const range = (start: number, end: number, step = 1): PartitionSource => ({
  kind: 'range',
  start,
  end,
  step,
});

test('map, filter and flatMap chain in order, each getting its env as the last argument', async () => {
  const out = await run(range(0, 6), [
    ['map', (x: number, env: { k: number }) => x * env.k, { k: 10 }],
    ['filter', (x: number) => x % 20 === 0],
    ['flatMap', (x: number, env: { tag: string }) => [x, `${env.tag}${x}`], { tag: '#' }],
  ]);
  assert.deepEqual(out, [0, '#0', 20, '#20', 40, '#40']);
});

test('flatMap takes any iterable: a generator, a string, a Set', async () => {
  const out = await run(array([2, 'ab']), [
    [
      'flatMap',
      function* (x: number | string) {
        if (typeof x === 'number') for (let i = 0; i < x; i++) yield i;
        else yield* x;
      },
    ],
    ['flatMap', (x: unknown) => new Set([x, x])],
  ]);
  assert.deepEqual(out, [0, 1, 'a', 'b']);
});

test('ranges count up or down by their step and may be empty', async () => {
  assert.deepEqual(await run(range(0, 10, 3), []), [0, 3, 6, 9]);
  assert.deepEqual(await run(range(5, 0, -2), []), [5, 3, 1]);
  assert.deepEqual(await run(range(3, 3), []), []);
  assert.deepEqual(await run(array([]), []), []);
});

test('count, foreach and collect', async () => {
  assert.equal(
    await run(range(0, 1000), [['filter', (x: number) => x % 7 === 0]], { kind: 'count' }),
    143,
  );
  g.wickSeen = [];
  const foreach = prepareFunction((x: number) => {
    (globalThis as unknown as { wickSeen: number[] }).wickSeen.push(x);
  }, 'foreach');
  assert.equal(await run(array([3, 1, 2]), [], { kind: 'foreach', fn: foreach }), null);
  assert.deepEqual(g.wickSeen, [3, 1, 2]);
});

test('reduce gives the partition’s value, or says it was empty', async () => {
  const fn = prepareFunction((a: number, b: number) => a * 10 + b, 'reduce');
  assert.deepEqual(await run(array([1, 2, 3]), [], { kind: 'reduce', fn }), { value: 123 });
  assert.deepEqual(await run(array([7]), [], { kind: 'reduce', fn }), { value: 7 });
  assert.deepEqual(await run(array([]), [], { kind: 'reduce', fn }), { empty: true });
  const withEnv = prepareFunction(
    (a: number, b: number, env: { m: number }) => (a + b) % env.m,
    'reduce',
    {
      m: 5,
    },
  );
  assert.deepEqual(await run(range(0, 5), [], { kind: 'reduce', fn: withEnv }), { value: 0 });
});

test('aggregate (fold, sum) folds into a fresh copy of zero, so no partition sees another’s', async () => {
  const seqOp = prepareFunction((acc: { n: number; xs: number[] }, x: number) => {
    acc.n += x;
    acc.xs.push(x);
    return acc;
  }, 'aggregate');
  const zero = { n: 0, xs: [] as number[] };
  const action: PartitionAction = { kind: 'aggregate', zero, seqOp };
  assert.deepEqual(await run(array([1, 2]), [], action), { n: 3, xs: [1, 2] });
  assert.deepEqual(await run(array([5]), [], action), { n: 5, xs: [5] });
  assert.deepEqual(zero, { n: 0, xs: [] }, 'the zero in the task description is untouched');
  const empty = await run(array([]), [], action);
  assert.deepEqual(empty, { n: 0, xs: [] }, 'an empty partition gives zero');
});

test('take stops pulling from the source once it has n elements', async () => {
  g.wickCalls = 0;
  const count = (x: number) => {
    (globalThis as unknown as { wickCalls: number }).wickCalls++;
    return x;
  };
  const out = await run(range(0, 1_000_000), [['map', count]], { kind: 'take', n: 3 });
  assert.deepEqual(out, [0, 1, 2]);
  assert.equal(g.wickCalls, 3);
  // Behind a filter, the source is read only until enough elements passed it.
  g.wickCalls = 0;
  const evens = await run(
    range(0, 1_000_000),
    [
      ['map', count],
      ['filter', (x: number) => x % 2 === 0],
    ],
    { kind: 'take', n: 2 },
  );
  assert.deepEqual(evens, [0, 2]);
  assert.equal(g.wickCalls, 3);
  // A flatMap that makes more than needed: the extra ones are dropped.
  assert.deepEqual(
    await run(array([1, 2]), [['flatMap', (x: number) => [x, x, x]]], { kind: 'take', n: 4 }),
    [1, 1, 1, 2],
  );
  assert.deepEqual(
    await run(array([1]), [], { kind: 'take', n: 5 }),
    [1],
    'fewer than n is all there is',
  );
});

test('mapPartitions gets the whole partition as an array, with transformations before and after it', async () => {
  const out = await run(range(1, 6), [
    ['map', (x: number) => x * 2],
    ['mapPartitions', (xs: number[], env: { k: number }) => [xs.length * env.k, ...xs], { k: 100 }],
    ['filter', (x: number) => x !== 4],
    ['mapPartitions', async (xs: number[]) => xs.map((x) => -x)],
    ['map', (x: number) => x + 1],
  ]);
  assert.deepEqual(out, [-499, -1, -5, -7, -9]);
  // Its output may be any iterable.
  assert.deepEqual(
    await run(array(['a', 'b']), [['mapPartitions', (xs: string[]) => new Set(xs).values()]]),
    ['a', 'b'],
  );
  // An empty partition gives it an empty array.
  assert.deepEqual(await run(array([]), [['mapPartitions', (xs: unknown[]) => [xs.length]]]), [0]);
  // And take still ends the task early after it.
  g.wickCalls = 0;
  const taken = await run(
    array([1, 2, 3, 4]),
    [
      ['mapPartitions', (xs: number[]) => xs],
      [
        'map',
        (x: number) => {
          (globalThis as unknown as { wickCalls: number }).wickCalls++;
          return x;
        },
      ],
    ],
    { kind: 'take', n: 2 },
  );
  assert.deepEqual(taken, [1, 2]);
  assert.equal(g.wickCalls, 2);
});

test('functions require() and import() modules that resolve from the application’s folder', async () => {
  const out = await run(array([1, 2]), [
    ['map', (x: number) => require('./helper.cjs').double(x)],
    [
      'mapPartitions',
      async (xs: number[]) => {
        // @ts-expect-error: resolved on the executor, from the application's folder
        const { triple } = await import('./helper.mjs');
        const path = await import('node:path');
        return xs.map((x) => `${path.basename('/a/b')}${triple(x)}`);
      },
    ],
    ['map', (s: string) => require('node:os').EOL.length + s],
  ]);
  assert.deepEqual(out, ['1b6', '1b12']);
});

test('a function that throws fails the task with the user’s error', async () => {
  await assert.rejects(
    run(array([1, 2, 3]), [
      [
        'map',
        (x: number) => {
          if (x === 2) throw new RangeError(`no twos, got ${x}`);
          return x;
        },
      ],
    ]),
    { name: 'RangeError', message: 'no twos, got 2' },
  );
  await assert.rejects(
    run(array([1]), [['mapPartitions', async () => Promise.reject(new Error('async boom'))]]),
    /async boom/,
  );
  await assert.rejects(run(array([1]), [['flatMap', (x: number) => x]]), TypeError, 'not iterable');
});

test('functions defined with inner named functions (as tsx and esbuild keepNames emit them) run', async () => {
  const out = await run(array([1, 2]), [
    [
      'map',
      (x: number) => {
        const inc = (y: number) => y + 1;
        function twice(z: number) {
          return z * 2;
        }
        return twice(inc(x));
      },
    ],
  ]);
  assert.deepEqual(out, [4, 6]);
});

// textFile: the lines that start in each split.

const textDir = mkdtempSync(join(tmpdir(), 'wick-test-textfile-'));
after(() => rmSync(textDir, { recursive: true, force: true }));
let fileNo = 0;

function writeText(content: string | Buffer): string {
  const path = join(textDir, `f${fileNo++}.txt`);
  writeFileSync(path, content);
  return path;
}

/** The lines of every split [cuts[i], cuts[i+1]) of the file, in order. */
async function readSplits(path: string, cuts: number[]): Promise<string[][]> {
  const out: string[][] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const src: PartitionSource = {
      kind: 'textFile',
      path,
      start: cuts[i] as number,
      end: cuts[i + 1] as number,
    };
    out.push((await run(src, [])) as string[]);
  }
  return out;
}

/** The lines a reader of the whole file sees: \n or \r\n ends a line; a last newline ends nothing. */
function expectedLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split(/\r?\n/);
  if (/\n$/.test(content)) lines.pop();
  return lines;
}

test('textFile: every line is in exactly one split, whatever the cuts (property)', async () => {
  const line = fc.string({
    unit: fc.constantFrom('a', 'b', ' ', 'é', '日', '😀', '\t', ','),
    maxLength: 12,
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { maxLength: 25 }),
      fc.boolean(),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
      async (lines, endsWithNewline, cutFractions) => {
        let content = lines.map(([l, eol]) => l + eol).join('');
        if (!endsWithNewline && lines.length > 0) {
          content = content.replace(/\r?\n$/, '');
        }
        const size = Buffer.byteLength(content);
        // Random cut points, anywhere: inside a \r\n, inside a multi-byte character, at 0 or size.
        const cuts = [0, ...cutFractions.map((f) => Math.floor(f * size)), size].sort(
          (a, b) => a - b,
        );
        const path = writeText(content);
        const splits = await readSplits(path, cuts);
        assert.deepEqual(splits.flat(), expectedLines(content));
      },
    ),
    { numRuns: 150 },
  );
});

test('textFile: equal splits of a random file, as textFile(path, n) makes them (property)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')),
        { maxLength: 40 },
      ),
      fc.integer({ min: 1, max: 12 }),
      async (lines, n) => {
        const content = lines.map((l) => `${l}\n`).join('');
        const size = Buffer.byteLength(content);
        const parts = Math.max(1, Math.min(n, size));
        const cuts = Array.from({ length: parts + 1 }, (_, i) => Math.floor((i * size) / parts));
        const splits = await readSplits(writeText(content), cuts);
        assert.equal(splits.length, parts);
        assert.deepEqual(splits.flat(), lines);
      },
    ),
    { numRuns: 100 },
  );
});

test('textFile: CRLF and LF lines, an empty line, a last line without a newline', async () => {
  const path = writeText('one\r\ntwo\n\r\n\nthree\r\nfour');
  assert.deepEqual(
    (await readSplits(path, [0, Buffer.byteLength('one\r\ntwo\n\r\n\nthree\r\nfour')])).flat(),
    ['one', 'two', '', '', 'three', 'four'],
  );
  // A cut between \r and \n: the line belongs to the split where it starts.
  assert.deepEqual(await readSplits(path, [0, 4, 30]), [['one'], ['two', '', '', 'three', 'four']]);
  // A cut exactly at the start of a line gives that line to the later split.
  assert.deepEqual(await readSplits(path, [0, 5, 30]), [['one'], ['two', '', '', 'three', 'four']]);
  assert.deepEqual(
    (await readSplits(writeText(''), [0, 0])).flat(),
    [],
    'an empty file has no lines',
  );
});

test('textFile: lines longer than the read buffer and splits far past it', async () => {
  const long = 'x'.repeat(1_500_000);
  const lines = ['short', long, 'é'.repeat(700_000), '', 'end'];
  const content = `${lines.join('\n')}\n`;
  const size = Buffer.byteLength(content);
  const path = writeText(content);
  const cuts = [0, 3, 1_000_000, 1_500_010, 2_000_000, size];
  const splits = await readSplits(path, cuts);
  assert.deepEqual(
    splits.map((s) => s.map((l) => l.length)),
    [[5], [1_500_000], [700_000], [], [0, 'end'.length]],
  );
  assert.deepEqual(splits.flat(), lines);
});

test('textFile: take stops reading early', async () => {
  const path = writeText('a\nb\nc\nd\n');
  assert.deepEqual(
    await run({ kind: 'textFile', path, start: 0, end: 8 }, [], { kind: 'take', n: 2 }),
    ['a', 'b'],
  );
});

test('ranges and arrays through maps and filters reduce in order, as a plain loop does (property)', async () => {
  const affine = (x: number, env: { a: number; b: number }) => x * env.a + env.b;
  const everyKth = (x: number, env: { k: number; r: number }) =>
    ((x % env.k) + env.k) % env.k === env.r;
  const join = prepareFunction((a: string, b: string) => `${a},${b}`, 'reduce');
  const step = fc.oneof(
    fc
      .record({ a: fc.integer({ min: -3, max: 3 }), b: fc.integer({ min: -5, max: 5 }) })
      .map((env): Step => ['map', affine, env]),
    fc
      .integer({ min: 1, max: 4 })
      .chain((k) => fc.record({ k: fc.constant(k), r: fc.integer({ min: 0, max: k - 1 }) }))
      .map((env): Step => ['filter', everyKth, env]),
  );
  const source = fc.oneof(
    fc.array(fc.integer({ min: -20, max: 20 }), { maxLength: 12 }).map(array),
    fc
      .tuple(
        fc.integer({ min: -15, max: 15 }),
        fc.integer({ min: -15, max: 15 }),
        fc.integer({ min: 1, max: 4 }),
      )
      .map(([start, end, by]) => range(start, end, start <= end ? by : -by)),
  );
  await fc.assert(
    fc.asyncProperty(source, fc.array(step, { maxLength: 3 }), async (src, steps) => {
      let xs: number[] = [];
      if (src.kind === 'array') xs = src.data as number[];
      else if (src.kind === 'range') {
        for (let v = src.start; src.step > 0 ? v < src.end : v > src.end; v += src.step) xs.push(v);
      }
      for (const [kind, , env] of steps) {
        xs =
          kind === 'map'
            ? xs.map((x) => affine(x, env as { a: number; b: number }))
            : xs.filter((x) => everyKth(x, env as { k: number; r: number }));
      }
      const strings = steps.concat([['map', (x: number) => String(x)]]);
      const expected = xs.length === 0 ? { empty: true } : { value: xs.map(String).join(',') };
      assert.deepEqual(await run(src, strings, { kind: 'reduce', fn: join }), expected);
    }),
  );
});

test('textFile: a file this host does not have says it may be the driver’s only, and how to ship it', async () => {
  const path = join(textDir, 'only-on-the-driver.csv');
  await assert.rejects(run({ kind: 'textFile', path, start: 0, end: 10 }, []), (err: Error) => {
    assert.match(
      err.message,
      new RegExp(`^textFile: ${path} does not exist on \\S+, where this executor runs`),
    );
    assert.match(err.message, /may exist on the driver's machine only/);
    assert.match(
      err.message,
      /wick submit --files .*only-on-the-driver\.csv .*textFile\('only-on-the-driver\.csv'\) in the driver, WickFiles\.get\('only-on-the-driver\.csv'\) in a task/,
    );
    return true;
  });
});

test('textFile by the name of an added file reads the executor’s copy of it, in splits', async () => {
  const filesDir = mkdtempSync(join(tmpdir(), 'wick-test-added-'));
  after(() => rmSync(filesDir, { recursive: true, force: true }));
  writeFileSync(join(filesDir, 'words.txt'), 'a b\nc\nd e f\n');
  const withFiles = new FunctionCompiler({ appDir, filesDir });
  const read = (start: number, end: number) =>
    runTask(
      {
        taskId: 0,
        jobId: 0,
        stageId: 0,
        partition: 0,
        attempt: 0,
        source: { kind: 'textFile', path: 'words.txt', start, end },
        transformations: [],
        action: { kind: 'collect' },
      },
      withFiles,
    );
  assert.deepEqual(await read(0, 12), ['a b', 'c', 'd e f']);
  assert.deepEqual(
    [...((await read(0, 5)) as string[]), ...((await read(5, 12)) as string[])],
    ['a b', 'c', 'd e f'],
  );
  // A name this executor has no file for: said so, not "ship it with --files".
  const missing = runTask(
    {
      taskId: 1,
      jobId: 0,
      stageId: 0,
      partition: 0,
      attempt: 0,
      source: { kind: 'textFile', path: 'other.txt', start: 0, end: 1 },
      transformations: [],
      action: { kind: 'collect' },
    },
    withFiles,
  );
  await assert.rejects(missing, (err: Error) => {
    assert.match(err.message, /^textFile: the added file other\.txt is not in /);
    assert.doesNotMatch(err.message, /ship it/);
    return true;
  });
});

test('textFile of a relative path that is no added file’s name is refused, saying what a path may be', async () => {
  await assert.rejects(
    run({ kind: 'textFile', path: 'data/words.txt', start: 0, end: 1 }, []),
    /textFile: "data\/words\.txt" is neither an absolute path nor the name of a file the application added/,
  );
});

test('chains of every narrow transformation give what a plain version does, in order (property)', async () => {
  // A flatMap in every chain: the fused push pipeline, not the range/array loops, runs them.
  type Pair = [number, number];
  const steps: Record<
    Transformation['kind'] & string,
    { f: unknown; plain: (xs: Pair[]) => Pair[] }
  > = {
    map: { f: ([k, v]: Pair): Pair => [k, v + 1], plain: (xs) => xs.map(([k, v]) => [k, v + 1]) },
    filter: { f: ([, v]: Pair) => v % 3 !== 0, plain: (xs) => xs.filter(([, v]) => v % 3 !== 0) },
    flatMap: {
      f: ([k, v]: Pair): Pair[] =>
        v % 2 === 0
          ? [
              [k, v],
              [k, -v],
            ]
          : [],
      plain: (xs) =>
        xs.flatMap(([k, v]): Pair[] =>
          v % 2 === 0
            ? [
                [k, v],
                [k, -v],
              ]
            : [],
        ),
    },
    mapValues: { f: (v: number) => v * 2, plain: (xs) => xs.map(([k, v]) => [k, v * 2]) },
    flatMapValues: {
      f: (v: number) => [v, v + 10],
      plain: (xs) =>
        xs.flatMap(([k, v]): Pair[] => [
          [k, v],
          [k, v + 10],
        ]),
    },
    keyBy: {
      f: ([k]: Pair) => k % 4,
      plain: (xs) => xs.map((p): Pair => [p[0] % 4, p[1]]),
    },
    mapPartitions: { f: (xs: Pair[]) => xs, plain: (xs) => xs },
  };
  // keyBy makes [k % 4, [k, v]]; map it back to a pair so that every step takes pairs.
  const unnest = ['map', ([k, p]: [number, Pair]): Pair => [k, p[1]]] as Step;
  const kinds = fc.constantFrom('map', 'filter', 'mapValues', 'flatMapValues', 'keyBy' as const);
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.integer({ min: -9, max: 9 }), fc.integer({ min: -20, max: 20 })), {
        maxLength: 10,
      }),
      fc.array(kinds, { maxLength: 4 }),
      fc.array(kinds, { maxLength: 3 }),
      fc.boolean(),
      async (data, before, after, withEnv) => {
        const chain = [...before, 'flatMap' as const, ...after];
        let xs = data as Pair[];
        const shipped: Step[] = [];
        for (const kind of chain) {
          xs = steps[kind].plain(xs);
          if (withEnv && kind === 'map') {
            shipped.push([
              'map',
              ([k, v]: Pair, env: { d: number }): Pair => [k, v + env.d],
              { d: 1 },
            ]);
          } else shipped.push([kind, steps[kind].f]);
          if (kind === 'keyBy') shipped.push(unnest);
        }
        assert.deepEqual(await run(array(data), shipped), xs);
      },
    ),
  );
});
