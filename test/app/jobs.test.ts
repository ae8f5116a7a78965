/**
 * Jobs on real executors: a WickContext in this test process, registered with a real master and
 * 2 workers × 1 core (one executor each), shared by the tests of this file. Every action and
 * source end to end, retries, a job that keeps failing, a task too large to send, and an
 * executor and then a worker SIGKILLed while their tasks run (the answer is still right).
 *
 * Tasks that must be running when something is killed wait for a "go" file the test writes after
 * the kill, so nothing depends on timing; each writes a "started" file with its pid first.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { JobFailedError } from '../../backend/app/driver/scheduler/TaskScheduler.js';
import { WickContext } from '../../backend/app/index.js';
import { eventually, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import { isAlive, waitUntilGone } from '../helpers/cli.js';
import { procStat } from '../helpers/processes.js';

// What `wick submit` would set must not leak in from the environment running the tests.
for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const MAX_FAILURES = 3;
const MAX_SIZE = 1024 * 1024;

let cluster: SharedCluster;
let wc: WickContext;
const dir = mkdtempSync(join(tmpdir(), 'wick-test-jobs-'));
let gateNo = 0;

/** The context's DriverEndpoint, to look at executors and their free cores. */
const driver = () => (wc as unknown as { driver: DriverEndpoint }).driver;

/** Resolves once `n` executors are registered and none runs anything of ours. */
function executorsIdle(signal: AbortSignal, n = 2): Promise<true> {
  return eventually(signal, () => {
    const es = [...driver().executors.values()];
    return es.length === n && es.every((e) => e.freeCores === e.cores) ? true : undefined;
  });
}

before(async () => {
  cluster = await startSharedCluster();
  wc = await WickContext.create({
    master: cluster.url,
    appName: 'jobs under test',
    conf: {
      'wick.task.maxFailures': String(MAX_FAILURES),
      'wick.rpc.message.maxSize': String(MAX_SIZE),
    },
  });
  await executorsIdle(AbortSignal.timeout(60_000));
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('every action and source gives what the same work gives locally', {
  timeout: 60_000,
}, async () => {
  const data = Array.from({ length: 20 }, (_, i) => i + 1);
  const rdd = wc.parallelize(data, 3);
  assert.equal(rdd.numPartitions, 3);
  const local = data.map((x) => x * 2).filter((x) => x % 3 !== 0);
  assert.deepEqual(
    await rdd
      .map((x: number, env: { k: number }) => x * env.k, { k: 2 })
      .filter((x: number) => x % 3 !== 0)
      .collect(),
    local,
  );
  assert.equal(await rdd.count(), 20);
  assert.equal(await rdd.first(), 1);
  assert.deepEqual(await rdd.take(9), data.slice(0, 9), 'take crosses partitions in order');
  assert.deepEqual(await wc.parallelize([5, 6], 4).take(3), [5, 6], 'empty partitions and too few');
  assert.equal(await rdd.reduce((a: number, b: number) => a + b), 210);
  assert.equal(await rdd.fold(0, (a: number, b: number) => a + b), 210);
  assert.equal(await rdd.sum(), 210);
  assert.deepEqual(
    await rdd.aggregate(
      { n: 0, max: 0 },
      (acc: { n: number; max: number }, x: number) => ({ n: acc.n + 1, max: Math.max(acc.max, x) }),
      (a, b) => ({ n: a.n + b.n, max: Math.max(a.max, b.max) }),
    ),
    { n: 20, max: 20 },
  );
  assert.deepEqual(
    await wc
      .parallelize(['a b', 'c'], 2)
      .flatMap((s: string) => s.split(' '))
      .collect(),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(
    await rdd.mapPartitions((xs: number[]) => [xs.length]).collect(),
    [6, 7, 7],
    'parallelize slices evenly, in order',
  );
  assert.deepEqual(await wc.range(10, 0, -3, 2).collect(), [10, 7, 4, 1]);
  assert.equal(await wc.range(0, 1_000_000, 1, 4).count(), 1_000_000);
  const seen = join(dir, 'foreach');
  await wc
    .parallelize(['x', 'y', 'z'], 2)
    .foreach((s: string, env: { seen: string }) => require('node:fs').appendFileSync(env.seen, s), {
      seen,
    });
  assert.deepEqual(readFileSync(seen, 'utf8').split('').sort(), ['x', 'y', 'z']);

  const lines = Array.from({ length: 500 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`);
  const file = join(dir, 'lines.txt');
  writeFileSync(file, `${lines.join('\r\n')}\r\n`);
  // Lazy (Spark's call shape): an RDD at once, the chain written as in every Spark WordCount.
  const text = wc.textFile(file, 3);
  assert.equal(typeof (text as unknown as { then?: unknown }).then, 'undefined');
  assert.equal(text.numPartitions, 3);
  assert.deepEqual(await text.collect(), lines);
  assert.equal(
    await wc
      .textFile(file, 7)
      .filter((l: string) => l.endsWith('é'))
      .count(),
    428,
  );

  await assert.rejects(
    wc.parallelize<number>([], 2).reduce((a: number, b: number) => a + b),
    /reduce\(\) of an empty RDD/,
  );
  await assert.rejects(wc.parallelize([], 2).first(), /first\(\) of an empty RDD/);
  // A missing file fails the job that reads it, not the call that names it (as Spark's).
  const missing = wc.textFile(join(dir, 'missing.txt')).map((l: string) => l.length);
  await assert.rejects(missing.count(), /textFile: cannot read \S+missing\.txt: ENOENT/);
  // Old code that awaited textFile still gets the RDD.
  assert.equal(await (await wc.textFile(file, 2)).count(), 500);
});

test('tasks run in their executor’s folder and environment, as the worker launched it', {
  timeout: 60_000,
}, async () => {
  // The workers serve launches with standby executors, whose task threads started before the
  // launch's folder and environment were known.
  const seen = (await wc
    .parallelize([0, 1], 2)
    .map(() => ({ cwd: process.cwd(), dirs: process.env.WICK_EXECUTOR_DIRS ?? 'unset' }))
    .collect()) as { cwd: string; dirs: string }[];
  const appId = wc.appId;
  for (const s of seen) {
    assert.match(s.cwd, new RegExp(`/${appId}/\\d+$`), JSON.stringify(s));
    assert.ok(s.dirs.includes(appId), `WICK_EXECUTOR_DIRS ${s.dirs} is the app's own`);
  }
});

test('a task that throws twice then succeeds: its job succeeds on the third attempt', {
  timeout: 60_000,
}, async () => {
  const counts = join(dir, 'flaky');
  const out = await wc
    .parallelize([1, 2, 3, 4], 2)
    .map(
      (x: number, env: { counts: string }) => {
        const fs = require('node:fs');
        const file = `${env.counts}-${x}`;
        const attempt = fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) + 1 : 1;
        fs.writeFileSync(file, String(attempt));
        if (x === 3 && attempt <= 2) throw new Error(`flaky ${x}, attempt ${attempt}`);
        return x * 10;
      },
      { counts },
    )
    .collect();
  assert.deepEqual(out, [10, 20, 30, 40]);
  assert.equal(readFileSync(`${counts}-3`, 'utf8'), '3');
  assert.equal(readFileSync(`${counts}-4`, 'utf8'), '1', 'the rest of the partition ran once more');
  const stderr = cluster.executorOutput(wc.appId, 'stderr');
  assert.match(
    stderr,
    /ERROR Executor: Exception in task 1\.0 in stage \d+\.0 \(TID \d+\)\nError: flaky 3, attempt 1\n\s+at /,
  );
  assert.match(stderr, /Error: flaky 3, attempt 2/);
});

test('a task that always throws fails its job after wick.task.maxFailures attempts, with the user’s error and the executor’s stack; its other tasks are killed', {
  timeout: 60_000,
}, async (t) => {
  const counts = join(dir, 'always');
  const job = wc
    .parallelize([13, 14], 2)
    .map(
      (x: number, env: { counts: string }) => {
        const fs = require('node:fs');
        const file = `${env.counts}-${x}`;
        fs.writeFileSync(
          file,
          String((fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0) + 1),
        );
        if (x === 13) throw new TypeError(`bad record ${x}`);
        // The other task blocks until it is killed.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000);
        return x;
      },
      { counts },
    )
    .collect();
  const err = await job.then(
    () => assert.fail('the job should have failed'),
    (e: unknown) => e as Error,
  );
  assert.ok(err instanceof JobFailedError);
  assert.match(
    err.message,
    new RegExp(
      `^Job aborted due to stage failure: Task 0 in stage (\\d+)\\.0 failed ${MAX_FAILURES} times, most recent failure: Lost task 0\\.${MAX_FAILURES - 1} in stage \\1\\.0 \\(TID \\d+, executor \\d+\\): TypeError: bad record 13\\n\\s+at `,
    ),
  );
  assert.match(err.message, /at .*wick-task-function\.js:\d+/, 'the stack is the executor’s');
  assert.equal(readFileSync(`${counts}-13`, 'utf8'), String(MAX_FAILURES));
  // The task still running when the job failed is killed, and its executor's core comes back.
  await executorsIdle(t.signal);
  assert.match(cluster.executorOutput(wc.appId, 'stderr'), /INFO Executor: Killed task 1\.0/);
  assert.deepEqual(await wc.parallelize([1, 2], 2).collect(), [1, 2]);
});

test('a task larger than wick.rpc.message.maxSize aborts its job with Spark’s message', {
  timeout: 60_000,
}, async (t) => {
  const big = 'x'.repeat(MAX_SIZE);
  await assert.rejects(wc.parallelize([big], 1).count(), (err: Error) => {
    assert.ok(err instanceof JobFailedError);
    assert.match(
      err.message,
      /^Serialized task \d+:0 was \d+ bytes, which exceeds max allowed: wick\.rpc\.message\.maxSize \(1048576 bytes\)\. Consider increasing wick\.rpc\.message\.maxSize or using broadcast variables for large values\.$/,
    );
    return true;
  });
  // The same with a small first task placed in the same round: nothing of the job is left
  // holding a core, and the next job gets both executors.
  await assert.rejects(wc.parallelize(['small', big], 2).count(), {
    message: /^Serialized task \d+:1 was/,
  });
  await executorsIdle(t.signal);
  assert.deepEqual(await wc.parallelize(['a', 'b'], 2).collect(), ['a', 'b']);
});

/**
 * A job of `n` tasks that each write `started-<x>-<pid>`, wait for the gate file, then compute
 * x * x; resolves with the sum of squares.
 */
function gatedJob(n: number): { gate: string; started: string; result: Promise<number> } {
  const gate = join(dir, `gate-${gateNo}`);
  const started = join(dir, `started-${gateNo++}`);
  const result = wc
    .range(0, n, 1, n)
    .map(
      (x: number, env: { gate: string; started: string }) => {
        const fs = require('node:fs');
        fs.mkdirSync(env.started, { recursive: true });
        fs.writeFileSync(`${env.started}/${x}-${process.pid}`, '');
        const nap = new Int32Array(new SharedArrayBuffer(4));
        while (!fs.existsSync(env.gate)) Atomics.wait(nap, 0, 0, 10);
        return x * x;
      },
      { gate, started },
    )
    .reduce((a: number, b: number) => a + b);
  return { gate, started, result };
}

/** [partition, pid] of every start so far. */
function starts(started: string): [number, number][] {
  if (!existsSync(started)) return [];
  return readdirSync(started).map((f) => f.split('-').map(Number) as [number, number]);
}

/** Resolves with the two executor pids once each runs a task of the job. */
async function bothRunning(signal: AbortSignal, started: string): Promise<[number, number]> {
  const pids = await eventually(signal, () => {
    const ps = [...new Set(starts(started).map(([, pid]) => pid))];
    return ps.length >= 2 ? ps : undefined;
  });
  const executors = cluster.others().filter((p) => p.cmdline.includes(`--app-id ${wc.appId}`));
  for (const pid of pids) {
    assert.ok(
      executors.some((e) => e.pid === pid),
      `${pid} is an executor of ${wc.appId}: ${JSON.stringify(executors)}`,
    );
  }
  return pids as [number, number];
}

test('an executor SIGKILLed mid-job: its task runs again elsewhere and the answer is right', {
  timeout: 60_000,
}, async (t) => {
  await executorsIdle(t.signal);
  const job = gatedJob(6);
  const [victim] = await bothRunning(t.signal, job.started);
  const lostPartition = starts(job.started).find(([, pid]) => pid === victim)?.[0];
  process.kill(victim, 'SIGKILL');
  assert.deepEqual(await waitUntilGone([victim]), []);
  writeFileSync(job.gate, '');
  assert.equal(await job.result, 0 + 1 + 4 + 9 + 16 + 25);
  const again = starts(job.started).filter(([x]) => x === lostPartition);
  assert.equal(again.length, 2, `partition ${lostPartition} ran again: ${JSON.stringify(again)}`);
  assert.ok(again.some(([, pid]) => pid !== victim));
  // The worker reports the loss; the master gives the application a new executor there.
  await executorsIdle(t.signal);
  assert.ok(
    !driver().executors.has('0') || !driver().executors.has('1'),
    'one of the first two is gone',
  );
});

test('a worker SIGKILLed mid-job: its executor exits, its task runs again elsewhere, the answer is right', {
  timeout: 60_000,
}, async (t) => {
  await executorsIdle(t.signal);
  const job = gatedJob(4);
  const pids = await bothRunning(t.signal, job.started);
  // The worker that launched one of the running executors.
  const worker = cluster.workers.find((w) => pids.some((pid) => procStat(pid)?.ppid === w.pid));
  assert.ok(worker, 'an executor runs under one of the workers');
  const orphan = pids.find((pid) => procStat(pid)?.ppid === worker.pid) as number;
  await worker.kill('SIGKILL');
  // The executor watched its worker, and exits with it.
  assert.deepEqual(await waitUntilGone([orphan]), []);
  writeFileSync(job.gate, '');
  assert.equal(await job.result, 0 + 1 + 4 + 9);
  assert.ok(!isAlive(orphan));
  assert.equal(driver().executors.size, 1);
  // Besides the daemons, only the application's other executor runs.
  assert.deepEqual(
    cluster.others().map((p) => p.cmdline.includes(`--app-id ${wc.appId}`)),
    [true],
  );
});
