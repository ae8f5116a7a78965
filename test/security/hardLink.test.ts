/**
 * A hard link planted in a work dir (issue 28, finding 5): opening without following links does
 * not stop one, as a hard link is the file itself under another name. The worker records the
 * device and inode of every stdout and stderr it makes and serves a log only when it is still
 * that file with one link (backend/logs/madeLogs.ts). Here a real executor's stdout is first
 * served by every route, then replaced by a hard link to a file outside the work dir: no route
 * serves it — the worker's /log and /api/log, the master's proxy of both — nor once the target's
 * own name is deleted (one link again, but not the inode the worker made), nor as the log of an
 * executor the worker never ran.
 */
import assert from 'node:assert/strict';
import { existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { runWick } from '../helpers/cli.js';
import { startMaster, startWorker } from '../helpers/cluster.js';

const SECRET = 'hard-link-test-cluster-secret-0123';
const ENV = { WICK_AUTH_SECRET: SECRET };
const AUTH = { authorization: `Bearer ${SECRET}` };
const OUTSIDE = 'TOP SECRET, OUTSIDE THE WORK DIR\n';
const pi = join(import.meta.dirname, '..', '..', 'examples', 'pi.ts');

/** Status and body of `url`; an /api/log body decoded. */
async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers: AUTH });
  let body = await res.text();
  if (url.includes('/api/log?') && res.status === 200) {
    body = Buffer.from((JSON.parse(body) as { data: string }).data, 'base64').toString();
  }
  return { status: res.status, body };
}

test('a hard link planted as a log is served by no route', { timeout: 180_000 }, async (t) => {
  const master = await startMaster(t, { env: ENV });
  const worker = await startWorker(t, master.url, { cores: 1, env: ENV });
  await master.waitForStderr(/Registering worker/);
  const r = await runWick(['submit', '--master', master.url, pi, '2'], { env: ENV });
  assert.equal(r.code, 0, r.stderr);
  const appId = /app-\d+-\d+/.exec(r.stderr)?.[0] as string;
  const stdout = join(worker.workDir, appId, '0', 'stdout');
  assert.ok(existsSync(stdout), stdout);
  const urls = (q: string) => [
    `${worker.webUiUrl}/log?${q}`,
    `${worker.webUiUrl}/api/log?${q}`,
    `${master.webUiUrl}/proxy/${worker.workerId}/log?${q}`,
    `${master.webUiUrl}/proxy/${worker.workerId}/api/log?${q}`,
  ];
  const real = urls(`appId=${appId}&executorId=0&logType=stdout`);
  // The file the worker made is served by every route.
  for (const url of real) {
    const { status, body } = await get(url);
    assert.equal(status, 200, `${url}: ${body}`);
  }
  // A file of the worker's user outside the work dir, on the same file system (a hard link's).
  const outside = mkdtempSync(join(dirname(worker.workDir), 'wick-hardlink-outside-'));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  const target = join(outside, 'secret');
  writeFileSync(target, OUTSIDE);

  const refusedEverywhere = async (list: string[], why: RegExp) => {
    for (const url of list) {
      const { status, body } = await get(url);
      assert.ok(!body.includes('TOP SECRET'), `${url} served the planted link: ${body}`);
      assert.equal(status, 400, `${url}: ${status} ${body}`);
      if (!url.includes('/api/')) assert.match(body, why, url);
    }
  };
  rmSync(stdout);
  linkSync(target, stdout);
  await refusedEverywhere(real, /2 links/);
  // The target's own name gone, the link is the file's only one: still not the file made there.
  rmSync(target);
  await refusedEverywhere(real, /not the file the worker made/);
  // The log of an executor this worker never ran, planted as a link.
  writeFileSync(target, OUTSIDE);
  mkdirSync(join(worker.workDir, appId, '7'));
  linkSync(target, join(worker.workDir, appId, '7', 'stderr'));
  await refusedEverywhere(urls(`appId=${appId}&executorId=7&logType=stderr`), /2 links/);
});
