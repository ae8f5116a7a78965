/**
 * Log reads raced by links (issue 17, finding 6): a thread of this test flips an entry of a work
 * dir between a real log and a way out (a link to /etc/passwd; an application dir that is a link
 * to a dir outside) while requests hit the worker's /log and /api/log and the master's proxy of
 * them. Checking a path and then opening it again lets a flip in between escape; the worker opens
 * without following the last link and checks the real path of what it opened, so none may.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';

checkNothingLeftRunning();

const SECRET = 'log-flip-test-cluster-secret';
const ENV = { WICK_AUTH_SECRET: SECRET };
const AUTH = { authorization: `Bearer ${SECRET}` };
const REAL = 'REAL LOG CONTENT\n';
const OUTSIDE = 'SECRET OUTSIDE THE WORK DIR\n';
const REQUESTS = 3000;
const IN_FLIGHT = 8;

/**
 * Flips `entry` until stopped. `file` mode alternates, each time by atomic renames, the regular
 * file `real` with a link to `outside`. `dir` mode moves the dir `real` to
 * `entry` and back, then puts a link to the dir `outside` there and removes it (a dir cannot be
 * renamed over a link). stop() resolves with the flips made.
 */
function flipper(
  mode: 'file' | 'dir',
  entry: string,
  real: string,
  outside: string,
): { stop(): Promise<number>; started: Promise<void> } {
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const fs = require('node:fs');
    const { mode, entry, real, outside, flag } = workerData;
    const tmp = entry + '.flip';
    let flips = 0;
    parentPort.postMessage('started');
    while (Atomics.load(flag, 0) === 0) {
      if (mode === 'file') {
        // The real file itself moves in and out (a hard link of it is refused, as any file with
        // more than one link: test/security/hardLink.test.ts).
        fs.rmSync(tmp, { force: true });
        fs.symlinkSync(outside, tmp);
        fs.renameSync(real, entry);
        fs.renameSync(entry, real);
        fs.renameSync(tmp, entry);
      } else {
        fs.renameSync(real, entry);
        fs.renameSync(entry, real);
        fs.symlinkSync(outside, entry);
        fs.unlinkSync(entry);
      }
      flips += 2;
    }
    parentPort.postMessage(flips);
  `;
  const worker = new Worker(code, {
    eval: true,
    workerData: { mode, entry, real, outside, flag },
  });
  const messages: unknown[] = [];
  let wake: (() => void) | undefined;
  worker.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  const next = async () => {
    while (messages.length === 0) await new Promise<void>((r) => (wake = r));
    return messages.shift();
  };
  return {
    started: next().then(() => undefined),
    async stop() {
      Atomics.store(flag, 0, 1);
      const flips = (await next()) as number;
      await worker.terminate();
      return flips;
    },
  };
}

interface Tally {
  served: number;
  refused: number;
  escapes: number;
  other: string[];
}

/** `count` requests, IN_FLIGHT at a time, round-robin over `urls`, each answer classified. */
async function hammer(urls: string[], count: number): Promise<Tally> {
  const tally: Tally = { served: 0, refused: 0, escapes: 0, other: [] };
  let next = 0;
  const one = async () => {
    for (let i = next++; i < count; i = next++) {
      const url = urls[i % urls.length] as string;
      const res = await fetch(url, { headers: AUTH });
      let body = await res.text();
      if (url.includes('/api/log?') && res.status === 200) {
        body = Buffer.from((JSON.parse(body) as { data: string }).data, 'base64').toString();
      }
      if (/root:|SECRET OUTSIDE/.test(body)) tally.escapes++;
      else if (res.status === 200 && body.endsWith(REAL)) tally.served++;
      else if (res.status === 400 || res.status === 404) tally.refused++;
      else tally.other.push(`${res.status} ${body.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, one));
  return tally;
}

async function cluster(t: TestContext) {
  const master = await startMaster(t, { env: ENV });
  const worker = await startWorker(t, master.url, { cores: 1, env: ENV });
  await master.waitForStderr(/Registering worker/);
  const outside = mkdtempSync(join(tmpdir(), 'wick-flip-outside-'));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  mkdirSync(join(outside, '0'));
  writeFileSync(join(outside, '0', 'stdout'), OUTSIDE);
  const urls = (q: string) => [
    `${worker.webUiUrl}/log?${q}`,
    `${worker.webUiUrl}/api/log?${q}`,
    `${master.webUiUrl}/proxy/${worker.workerId}/log?${q}`,
    `${master.webUiUrl}/proxy/${worker.workerId}/api/log?${q}`,
  ];
  return { worker, outside, urls };
}

test('3,000 reads while a log file flips between itself and a link to /etc/passwd: 0 escapes', {
  timeout: 180_000,
}, async (t) => {
  const { worker, urls } = await cluster(t);
  const dir = join(worker.workDir, 'app-20261202000000-0001', '0');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'real'), REAL);
  const flip = flipper('file', join(dir, 'stdout'), join(dir, 'real'), '/etc/passwd');
  await flip.started;
  const tally = await hammer(urls('appId=app-20261202000000-0001&executorId=0'), REQUESTS);
  const flips = await flip.stop();
  t.diagnostic(
    `file flips: ${flips} flips, ${REQUESTS} requests: ${tally.served} served, ${tally.refused} refused, ${tally.escapes} escapes, ${tally.other.length} other`,
  );
  assert.equal(tally.escapes, 0, 'a request read /etc/passwd through the flipped link');
  assert.deepEqual(tally.other, []);
  assert.ok(flips >= REQUESTS, `only ${flips} flips`);
  // Both sides of the flip were met: the race ran, and a real log still reads.
  assert.ok(tally.served > 0 && tally.refused > 0, JSON.stringify(tally));
});

test('1,000 reads while an executor dir flips between a dir and a link to one outside: 0 escapes', {
  timeout: 180_000,
}, async (t) => {
  const { worker, outside, urls } = await cluster(t);
  const app = join(worker.workDir, 'app-20261202000000-0002');
  const real = join(app, '0.real');
  mkdirSync(real, { recursive: true });
  writeFileSync(join(real, 'stdout'), REAL);
  const flip = flipper('dir', join(app, '0'), real, join(outside, '0'));
  await flip.started;
  const tally = await hammer(urls('appId=app-20261202000000-0002&executorId=0'), 1000);
  const flips = await flip.stop();
  t.diagnostic(
    `dir flips: ${flips} flips, 1000 requests: ${tally.served} served, ${tally.refused} refused, ${tally.escapes} escapes, ${tally.other.length} other`,
  );
  assert.equal(tally.escapes, 0, 'a request read outside the work dir through the flipped dir');
  assert.deepEqual(tally.other, []);
  assert.ok(tally.served > 0 && tally.refused > 0, JSON.stringify(tally));
});
