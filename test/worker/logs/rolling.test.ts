/**
 * Executor log rolling (wick.executor.logs.rolling.*) with real processes: a `wick master`, a
 * `wick worker` that rolls by size, and an executor that writes a counted sequence of lines fast
 * enough to roll many times. A `wick logs -f` through the master follows it from the first byte
 * across every roll: what it prints is exactly the sequence (nothing lost, nothing repeated) and
 * exactly the log's files end to end. With maxRetainedFiles and compression: only the newest
 * rolled files stay, gzipped and readable, and the log API still reads by offsets that count
 * the deleted bytes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { sortRolledOver } from '../../../backend/logs/rolledFiles.js';
import { startMaster, startWorker } from '../../helpers/cluster.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { runExecutor } from '../../helpers/logCluster.js';
import { waitFor } from '../../helpers/processes.js';
import { uiFetch } from '../../helpers/webUi.js';

checkNothingLeftRunning();

const WICK = fileURLToPath(new URL('../../../bin/wick.js', import.meta.url));
/** Spark's smallest maxSize. */
const MAX_SIZE = 81_920;
const LINES = 60_000;

/** What the executor writes: line i is `line <i, 8 digits>` (14 bytes), LINES of them. */
function expected(): string {
  let s = '';
  for (let i = 0; i < LINES; i++) s += `line ${String(i).padStart(8, '0')}\n`;
  return s;
}

/**
 * Waits for a file `go` in its directory, then writes the lines in batches of 500, each batch a
 * write of its own on a later turn, so that the worker gets many chunks and rolls between them.
 */
const WRITER = `
const fs = require('fs');
const wait = setInterval(() => {
  if (!fs.existsSync('go')) return;
  clearInterval(wait);
  let i = 0;
  const batch = () => {
    let s = '';
    for (const end = Math.min(${LINES}, i + 500); i < end; i++) s += 'line ' + String(i).padStart(8, '0') + '\\n';
    process.stdout.write(s, () => (i < ${LINES} ? setImmediate(batch) : process.exit(0)));
  };
  batch();
}, 5);
`;

async function rollingCluster(t: TestContext, conf: Record<string, string | number | boolean>) {
  const master = await startMaster(t);
  const worker = await startWorker(t, master.url, {
    cores: 1,
    conf: {
      'spark.executor.logs.rolling.strategy': 'size',
      'spark.executor.logs.rolling.maxSize': MAX_SIZE,
      ...conf,
    },
  });
  await master.waitForStderr(/Registering worker/);
  return { master, worker };
}

/** The log's files in order (rolled oldest first, then the active one), as on disk. */
function filesOf(dir: string): string[] {
  return [...sortRolledOver(readdirSync(dir), 'stdout'), 'stdout'];
}

function contentOf(path: string): Buffer {
  const b = readFileSync(path);
  return path.endsWith('.gz') ? gunzipSync(b) : b;
}

test('wick logs -f follows a log across many rolls: every byte once, in order', {
  timeout: 120_000,
}, async (t) => {
  const { master, worker } = await rollingCluster(t, {});
  const { appId, state } = await runExecutor(t, master.url, WRITER);
  await state('RUNNING');
  const child = spawn(
    process.execPath,
    [WICK, 'logs', '-f', '--master', master.url, `${appId}/0`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WICK_MASTER: undefined },
    },
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const dir = join(worker.workDir, appId, '0');
  // The follow is under way (the worker counts it) before the first byte is written.
  await waitFor(
    'the follow to start',
    async () => {
      const s = (await (await uiFetch(`${worker.webUiUrl}/api/worker`)).json()) as {
        logFollows?: number;
      };
      return (s.logFollows ?? 0) > 0;
    },
    t.signal,
  );
  writeFileSync(join(dir, 'go'), '');
  assert.equal(await exited, 0, stderr);
  await state('EXITED');

  const followed = Buffer.concat(out).toString();
  const want = expected();
  assert.equal(followed.length, want.length, 'bytes followed');
  if (followed !== want) {
    const at = [...want].findIndex((c, i) => followed[i] !== c);
    assert.fail(
      `the follow differs from the sequence at byte ${at}: ${JSON.stringify(followed.slice(at - 20, at + 20))}`,
    );
  }
  const files = filesOf(dir);
  const rolled = files.slice(0, -1);
  assert.ok(rolled.length >= 5, `rolled ${rolled.length} times: ${files.join(' ')}`);
  for (const name of rolled) {
    assert.match(name, /^stdout--\d{4}-\d\d-\d\d--\d\d-\d\d-\d\d--\d{4}(--\d+)?$/);
    assert.equal(statSync(join(dir, name)).size, MAX_SIZE, `${name}: full, and no larger`);
  }
  const onDisk = Buffer.concat(files.map((f) => contentOf(join(dir, f)))).toString();
  assert.equal(onDisk, want, 'the files end to end are the sequence');
  assert.match(stderr, /\[wick logs\] process exited/);
});

test('maxRetainedFiles keeps the newest rolled files, compressed; offsets count what was deleted', {
  timeout: 120_000,
}, async (t) => {
  const { master, worker } = await rollingCluster(t, {
    'spark.executor.logs.rolling.maxRetainedFiles': 2,
    'spark.executor.logs.rolling.enableCompression': true,
  });
  const { appId, state } = await runExecutor(t, master.url, WRITER);
  await state('RUNNING');
  const dir = join(worker.workDir, appId, '0');
  writeFileSync(join(dir, 'go'), '');
  await state('EXITED');

  const want = expected();
  const files = filesOf(dir);
  const rolled = files.slice(0, -1);
  assert.equal(rolled.length, 2, `kept: ${files.join(' ')}`);
  for (const name of rolled) assert.match(name, /\.gz$/);
  assert.ok(!readdirSync(dir).some((n) => n.endsWith('.tmp')), 'no compression left half done');
  // Compressed files read back as the lines they hold: the end of the sequence, in order.
  const kept = Buffer.concat(files.map((f) => contentOf(join(dir, f)))).toString();
  const removed = want.length - kept.length;
  assert.ok(removed > 0);
  assert.equal(kept, want.slice(removed));
  assert.equal(removed % MAX_SIZE, 0, 'whole files deleted');

  // The log API: offsets over the whole log, from the first byte ever written.
  const api = async (q: string) =>
    (await (
      await uiFetch(`${worker.webUiUrl}/api/log?appId=${appId}&executorId=0&${q}`)
    ).json()) as { offset: number; length: number; totalSize: number; data: string };
  const all = await api(`offset=0&byteLength=${want.length}`);
  assert.deepEqual([all.offset, all.totalSize], [removed, want.length]);
  assert.equal(Buffer.from(all.data, 'base64').toString(), want.slice(removed));
  // A range across a compressed file and the next one.
  const from = removed + MAX_SIZE - 100;
  const across = await api(`offset=${from}&byteLength=300`);
  assert.equal(across.offset, from);
  assert.equal(Buffer.from(across.data, 'base64').toString(), want.slice(from, from + 300));
  // Spark's plain-text page, the same bytes.
  const page = await (
    await uiFetch(
      `${worker.webUiUrl}/log?appId=${appId}&executorId=0&offset=${from}&byteLength=300`,
    )
  ).text();
  assert.ok(
    page.startsWith(`==== Bytes ${from}-${from + 300} of ${want.length} of `),
    page.slice(0, 100),
  );
  assert.ok(page.endsWith(want.slice(from, from + 300)));
});
