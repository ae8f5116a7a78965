/**
 * A worker's web UI over HTTP, against real master and worker processes: Spark's /json of the
 * worker, Spark's plain-text /log with its header and byte paging, and the refusal of every way
 * out of the work dir (dot-dot, encoded dot-dot, absolute paths, symlinks, NUL).
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { connectClient, workerIn } from '../helpers/masterMocks.js';
import { uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

const APP = 'app-20261130120000-0000';
const LOG = Array.from({ length: 2000 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`).join('');

async function cluster(t: import('node:test').TestContext) {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const worker = await startWorker(t, master.url, { cores: 1, memory: '512m' });
  const s = await client.waitFor((x) => workerIn(x, worker.workerId)?.state === 'ALIVE');
  const ui = workerIn(s, worker.workerId)?.webUiAddress as string;
  assert.match(ui, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(new URL(ui).port, '0');
  return { master, worker, ui };
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await uiFetch(url);
  return { status: res.status, text: await res.text() };
}

test("a worker's /json and /log speak Spark's formats; /log pages by bytes", {
  timeout: 30_000,
}, async (t) => {
  const { master, worker, ui } = await cluster(t);
  mkdirSync(join(worker.workDir, APP, '0'), { recursive: true });
  writeFileSync(join(worker.workDir, APP, '0', 'stdout'), LOG);
  writeFileSync(join(worker.workDir, APP, '0', 'stderr'), 'oops\n');
  mkdirSync(join(worker.workDir, 'driver-20261130120000-0001'));
  writeFileSync(join(worker.workDir, 'driver-20261130120000-0001', 'stdout'), 'driver says hi\n');

  const json = (await (await uiFetch(`${ui}/json`)).json()) as Record<string, unknown>;
  for (const k of [
    'id',
    'masterurl',
    'masterwebuiurl',
    'cores',
    'coresused',
    'memory',
    'memoryused',
    'executors',
    'finishedexecutors',
  ]) {
    assert.ok(k in json, `worker /json lacks ${k}`);
  }
  assert.deepEqual(
    [json.id, json.masterurl, json.masterwebuiurl, json.cores, json.memory],
    [worker.workerId, master.url, master.webUiUrl, 1, 512],
  );

  const total = Buffer.byteLength(LOG);
  const file = (name: string) => new RegExp(`of ${total} of \\S*${APP}/0/${name} ====\\n`);
  // Without offset: the last byteLength bytes (100 KiB by default: here, all of it).
  const all = await get(`${ui}/log?appId=${APP}&executorId=0&logType=stdout`);
  assert.equal(all.status, 200);
  assert.match(all.text, new RegExp(`^==== Bytes 0-${total} `));
  assert.match(all.text, file('stdout'));
  assert.ok(all.text.endsWith(LOG));
  const tail = await get(`${ui}/log?appId=${APP}&executorId=0&logType=stdout&byteLength=20`);
  assert.equal(
    tail.text,
    `==== Bytes ${total - 20}-${total} of ${total} of ${/of \S+ ====/.exec(tail.text)?.[0].slice(3, -5)} ====\n${LOG.slice(-20)}`,
  );
  const page = await get(
    `${ui}/log?appId=${APP}&executorId=0&logType=stdout&offset=10&byteLength=10`,
  );
  assert.match(page.text, /^==== Bytes 10-20 of /);
  assert.ok(page.text.endsWith(LOG.slice(10, 20)));
  // Past the end: nothing, at the end.
  const past = await get(
    `${ui}/log?appId=${APP}&executorId=0&logType=stdout&offset=${total + 100}`,
  );
  assert.match(past.text, new RegExp(`^==== Bytes ${total}-${total} of ${total} `));
  // logType defaults to stdout; stderr and drivers too.
  assert.match((await get(`${ui}/log?appId=${APP}&executorId=0`)).text, /^==== Bytes 0-/);
  assert.ok(
    (await get(`${ui}/log?appId=${APP}&executorId=0&logType=stderr`)).text.endsWith('\noops\n'),
  );
  assert.ok(
    (await get(`${ui}/log?driverId=driver-20261130120000-0001`)).text.endsWith(
      '\ndriver says hi\n',
    ),
  );

  // The dashboard's JSON form of the same, on the worker's own port.
  const r = (await (
    await uiFetch(`${ui}/api/log?appId=${APP}&executorId=0&offset=5&byteLength=9`)
  ).json()) as Record<string, unknown>;
  assert.deepEqual([r.offset, r.length, r.totalSize], [5, 9, total]);
  assert.equal(Buffer.from(r.data as string, 'base64').toString(), LOG.slice(5, 14));
});

test("a worker's log endpoints never read outside the work dir", { timeout: 30_000 }, async (t) => {
  const { worker, ui } = await cluster(t);
  const outside = mkdtempSync(join(tmpdir(), 'wick-outside-'));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  mkdirSync(join(outside, '0'));
  writeFileSync(join(outside, '0', 'stdout'), 'SECRET OUTSIDE\n');
  writeFileSync(join(outside, 'stdout'), 'SECRET OUTSIDE\n');
  // A file link and a directory link, both pointing out of the work dir.
  mkdirSync(join(worker.workDir, 'app-link', '0'), { recursive: true });
  symlinkSync(join(outside, '0', 'stdout'), join(worker.workDir, 'app-link', '0', 'stdout'));
  symlinkSync(outside, join(worker.workDir, 'app-dirlink'));
  symlinkSync(outside, join(worker.workDir, 'driver-link'));

  const attempts = [
    'appId=..&executorId=0',
    'appId=../..&executorId=0&logType=stdout',
    'appId=..%2F..%2Fetc&executorId=0',
    'appId=%2e%2e&executorId=0',
    'appId=%252e%252e%252f&executorId=0',
    'appId=app-1%2F..%2F..&executorId=0',
    `appId=${encodeURIComponent(outside)}&executorId=0`,
    'driverId=%2Fetc%2Fpasswd',
    'driverId=..',
    'driverId=...',
    'driverId=driver-1%00',
    'driverId=driver-1%00%2F..%2F..%2Fetc%2Fpasswd',
    'appId=app-1&executorId=0%00',
    'appId=app-1&executorId=..%2F..',
    'appId=app-1&executorId=1e3',
    'appId=app-1&executorId=0&logType=..%2F..%2F..%2Fetc%2Fpasswd',
    'appId=app-1&executorId=0&logType=%2Fetc%2Fpasswd',
    'appId=app-link&executorId=0',
    'appId=app-dirlink&executorId=0',
    'driverId=driver-link',
    'appId=.hidden&executorId=0',
  ];
  for (const q of attempts) {
    for (const path of ['/log', '/api/log']) {
      const r = await get(`${ui}${path}?${q}`);
      assert.ok(
        r.status === 400 || r.status === 404,
        `${path}?${q} answered ${r.status}: ${r.text}`,
      );
      assert.doesNotMatch(r.text, /SECRET|root:/, `${path}?${q}`);
    }
    const follow = await get(`${ui}/api/log/follow?${q}&offset=0`);
    assert.ok(
      follow.status === 400 || follow.status === 404,
      `follow?${q} answered ${follow.status}`,
    );
  }
  // The path itself cannot climb either.
  for (const path of [
    '/log/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/static/..%2f..%2fpackage.json',
  ]) {
    const r = await get(`${ui}${path}`);
    assert.equal(r.status, 404, path);
  }
});
