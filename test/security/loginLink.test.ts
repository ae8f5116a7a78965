/**
 * A login link is valid once across every web UI of the cluster (issue 28, finding 4): each UI
 * keeps only the nonces it saw, so a link must name the one UI it opens (shared/uiLogin.ts). Links
 * come from the real `wick ui-url`; a link used on the master opens no worker's UI (nor the
 * master again), a worker's link opens that worker's UI once and not the master's, nor another
 * worker's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runWick } from '../helpers/cli.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { openLoginLink } from '../helpers/webUi.js';

const SECRET = 'login-link-once-cluster-secret-01';
const ENV = { WICK_AUTH_SECRET: SECRET };

/** `token`'s link opened on the UI at `base`: its status and what it said. */
async function open(base: string, link: string): Promise<{ status: number; body: string }> {
  const token = new URL(link).searchParams.get('token') ?? '';
  const res = await fetch(`${base}/login?token=${encodeURIComponent(token)}`, {
    redirect: 'manual',
    headers: { accept: 'text/html' },
  });
  return { status: res.status, body: await res.text() };
}

async function uiUrl(masterUrl: string, ...args: string[]): Promise<string> {
  const r = await runWick(['ui-url', '--master', masterUrl, ...args], { env: ENV });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

test('a login link opens one web UI of the cluster, once', { timeout: 120_000 }, async (t) => {
  const master = await startMaster(t, { env: ENV });
  const w1 = await startWorker(t, master.url, { cores: 1, env: ENV });
  const w2 = await startWorker(t, master.url, { cores: 1, env: ENV });
  await master.waitForStderr(/Registering worker[\s\S]*Registering worker/);

  // The master's link: it logs in there, then is refused there and on each worker's UI.
  const forMaster = await uiUrl(master.url);
  assert.ok(forMaster.startsWith(`${master.webUiUrl}/login?`), forMaster);
  await openLoginLink(forMaster);
  const again = await open(master.webUiUrl, forMaster);
  assert.equal(again.status, 401, again.body);
  assert.match(again.body, /used already/);
  for (const w of [w1, w2]) {
    const r = await open(w.webUiUrl, forMaster);
    assert.equal(r.status, 401, `${w.webUiUrl}: ${r.body}`);
    assert.match(r.body, /for this web UI \(worker:/);
    assert.doesNotMatch(r.body, /Logged in/);
  }

  // A worker's link, first tried on the master and on the other worker: refused, and not used
  // up; then it opens its own worker's UI, once.
  const forW1 = await uiUrl(master.url, '--worker', w1.workerId);
  assert.ok(forW1.startsWith(`${w1.webUiUrl}/login?`), forW1);
  for (const base of [master.webUiUrl, w2.webUiUrl]) {
    const r = await open(base, forW1);
    assert.equal(r.status, 401, `${base}: ${r.body}`);
    assert.match(r.body, /for this web UI/);
  }
  await openLoginLink(forW1);
  const twice = await open(w1.webUiUrl, forW1);
  assert.equal(twice.status, 401, twice.body);
  assert.match(twice.body, /used already/);
});
