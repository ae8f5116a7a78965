/**
 * `wick ui-url` against real daemons: with authentication on it prints a login link for the
 * master's web UI, for a worker's own (--worker), or for an address given (--ui, no master
 * asked), each of which logs a browser in once; with authentication off, the address alone.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assertBuilt, runWick } from '../helpers/cli.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { openLoginLink } from '../helpers/webUi.js';

before(assertBuilt);
checkNothingLeftRunning();

const SECRET = 'ui-url-test-cluster-secret-1';
const CONF = { 'wick.authenticate.secret': SECRET };

async function uiUrl(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await runWick(['ui-url', ...args], { env });
  assert.equal(r.code, 0, r.stderr);
  return r;
}

test("ui-url prints one-time login links for the master's and a worker's web UI", {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: CONF });
  const worker = await startWorker(t, master.url, { cores: 1, conf: CONF });
  await master.waitForStderr(/Registering worker/);
  const secretConf = ['--conf', `wick.authenticate.secret=${SECRET}`];

  const m = await uiUrl(['--master', master.url, ...secretConf]);
  const link = m.stdout.trim();
  assert.match(
    link,
    new RegExp(`^${master.webUiUrl}/login\\?token=\\d{13}\\.[\\w-]{22}\\.[\\w-]{43}$`),
  );
  assert.match(m.stderr, /Open it within 5 minutes; it logs one browser in, once/);
  const cookie = await openLoginLink(link);
  const json = await fetch(`${master.webUiUrl}/json`, { headers: { cookie } });
  assert.equal(json.status, 200);
  assert.equal((await fetch(link)).status, 401, 'a link works once');

  // The secret found as every process finds it: here, from the environment.
  const fromEnv = await uiUrl(['--master', master.url], { WICK_AUTH_SECRET: SECRET });
  await openLoginLink(fromEnv.stdout.trim());

  const w = await uiUrl(['--master', master.url, '--worker', worker.workerId, ...secretConf]);
  assert.ok(w.stdout.startsWith(`${worker.webUiUrl}/login?token=`), w.stdout);
  const workerCookie = await openLoginLink(w.stdout.trim());
  assert.equal(
    (await fetch(`${worker.webUiUrl}/json`, { headers: { cookie: workerCookie } })).status,
    200,
  );

  // An address of the user's (a tunnel, say): no master is asked.
  const port = new URL(master.webUiUrl).port;
  const tunnel = await uiUrl(['--ui', `http://localhost:${port}/ignored/path`, ...secretConf], {
    WICK_MASTER: 'wick://127.0.0.1:1',
  });
  assert.ok(tunnel.stdout.startsWith(`http://localhost:${port}/login?token=`), tunnel.stdout);
  await openLoginLink(tunnel.stdout.trim());

  const unknown = await runWick([
    'ui-url',
    '--master',
    master.url,
    '--worker',
    'worker-nope',
    ...secretConf,
  ]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No worker worker-nope\. The master knows no worker worker-nope/);
  const badUi = await runWick(['ui-url', '--ui', 'wick://127.0.0.1:7077', ...secretConf]);
  assert.equal(badUi.code, 1);
  assert.match(
    badUi.stderr,
    /Invalid --ui "wick:\/\/127\.0\.0\.1:7077": expected the web UI's address/,
  );
});

test('with authentication off, ui-url prints the address and says no login is needed', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.authenticate': false } });
  const r = await uiUrl(['--master', master.url, '--conf', 'wick.authenticate=false']);
  assert.equal(r.stdout, `${master.webUiUrl}\n`);
  assert.match(r.stderr, /Authentication is off: the web UI needs no login/);
});
