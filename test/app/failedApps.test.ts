/**
 * A failed job is a FAILED application however the driver ends (issue 29, item 1): against one
 * real local cluster, New Job's template — `try { … } finally { await wc.stop() }` — whose task
 * throws ends FAILED with its message and the user's line, in client and in cluster mode, in the
 * master's state and `wick status` (text and --json); so do the driver's own uncaught error in
 * that finally, and a driver that catches its failed job, stops, and exits non-zero. The same
 * template's good job still FINISHES. `submit --deploy-mode cluster --wait` of a failing driver
 * prints the driver's error (with the user's line) and exits 1. A killed app's executors say
 * KILLED, not "exit 0".
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  appIdIn,
  eventually,
  killWhenDone,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { runWick, startWick } from '../helpers/cli.js';

let cluster: SharedCluster;
const fixtures = join(import.meta.dirname, '..', 'fixtures', 'apps');
const inFinally = join(fixtures, 'throws-in-finally.ts');
/** The line of throws-in-finally.ts that throws (the fixture says so too). */
const THROW_LINE = 14;
const atThrow = new RegExp(`throws-in-finally\\.ts:${THROW_LINE}:\\d+`);

before(async () => {
  cluster = await startSharedCluster();
});

after(async () => {
  await cluster?.stop();
});

function submit(args: string[]) {
  return runWick(['submit', '--master', cluster.url, ...args], { mark: cluster.mark });
}

async function statusOf(appId: string): Promise<{ text: string; json: Record<string, unknown> }> {
  const text = await runWick(['status', appId, '--master', cluster.url], { mark: cluster.mark });
  assert.equal(text.code, 0, text.stderr);
  const all = await runWick(['status', '--json', '--master', cluster.url], { mark: cluster.mark });
  assert.equal(all.code, 0, all.stderr);
  const json = JSON.parse(all.stdout) as Record<string, Record<string, unknown>[]>;
  const app = [...(json.activeapps ?? []), ...(json.completedapps ?? [])].find(
    (a) => a.id === appId,
  );
  assert.ok(app, all.stdout);
  return { text: text.stdout, json: app };
}

/** The app's final state, once it has one (it may end a moment after its driver's process). */
async function finalApp(appId: string) {
  const s = await cluster.watch.waitFor((s) =>
    ['FINISHED', 'FAILED', 'KILLED'].includes(cluster.watch.app(s, appId)?.state ?? ''),
  );
  const app = cluster.watch.app(s, appId);
  assert.ok(app);
  return app;
}

test("client mode: the template's try/finally whose task throws exits 1 and its app is FAILED with the message and line", {
  timeout: 90_000,
}, async () => {
  const r = await submit([inFinally]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /wick: JobFailedError: .*Error: no embers here: ember/);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);
  const app = await finalApp(appId);
  assert.equal(app.state, 'FAILED', JSON.stringify(app));
  assert.match(app.failure?.message ?? '', /^JobFailedError: .*no embers here: ember/);
  assert.equal(app.failure?.location?.file, inFinally);
  assert.equal(app.failure?.location?.line, THROW_LINE);
  // Its executors were stopped by the driver, cleanly: they say so.
  for (const e of app.removedExecutors) assert.notEqual(e.state, 'RUNNING');

  const { text, json } = await statusOf(appId);
  assert.match(text, new RegExp(`^${appId}  throws in finally  FAILED`));
  assert.match(text, /failed: JobFailedError: .*no embers here: ember/);
  assert.match(text, atThrow);
  assert.equal(json.state, 'FAILED');
  assert.match(
    String((json.failure as { message?: string } | undefined)?.message),
    /no embers here: ember/,
    'wick status --json says why',
  );
  await cluster.assertOnlyClusterLeft();
});

test('client mode: an uncaught error of the driver itself in that try/finally ends the app FAILED with it', {
  timeout: 60_000,
}, async () => {
  const r = await submit([join(fixtures, 'uncaught-in-finally.ts')]);
  assert.equal(r.code, 1, r.stderr);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);
  const app = await finalApp(appId);
  assert.equal(app.state, 'FAILED', JSON.stringify(app));
  assert.equal(app.failure?.message, 'TypeError: the report has nowhere to go (10 rows)');
  assert.equal(app.failure?.location?.line, 12);
  await cluster.assertOnlyClusterLeft();
});

test('client mode: a driver that catches its failed job, stops, and exits 1 (exitCode or exit()) ends FAILED', {
  timeout: 90_000,
}, async () => {
  for (const how of ['exitCode', 'exit']) {
    const r = await submit([join(fixtures, 'exits-nonzero.ts'), how]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /The job failed: /);
    const appId = appIdIn(r.stderr);
    assert.ok(appId, r.stderr);
    const app = await finalApp(appId);
    assert.equal(app.state, 'FAILED', `${how}: ${JSON.stringify(app)}`);
    assert.equal(app.failure?.message, 'Error: the driver exited with status 1');
    const { text } = await statusOf(appId);
    assert.match(text, /FAILED/);
    assert.match(text, /failed: Error: the driver exited with status 1/);
  }
  await cluster.assertOnlyClusterLeft();
});

test("the template's try/finally with a good job still ends FINISHED, with no failure", {
  timeout: 60_000,
}, async () => {
  const r = await submit([join(fixtures, 'ok-in-finally.ts')]);
  assert.equal(r.code, 0, r.stderr);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);
  const app = await finalApp(appId);
  assert.equal(app.state, 'FINISHED', JSON.stringify(app));
  assert.equal(app.failure, undefined);
  const { json } = await statusOf(appId);
  assert.equal(json.state, 'FINISHED');
  assert.equal(json.failure, undefined);
});

test("cluster mode --wait: the template's failing job prints the driver's error with the user's line, exits 1, app and driver FAILED", {
  timeout: 90_000,
}, async () => {
  const r = await submit(['--deploy-mode', 'cluster', '--wait', inFinally]);
  assert.equal(r.code, 1, r.stderr);
  const driverId = r.stdout.split('\n')[0] as string;
  assert.match(driverId, /^driver-/);
  assert.match(r.stderr, new RegExp(`Driver ${driverId} ended FAILED`));
  // The end of the driver's stderr: its error, the task's message and the user's line.
  assert.match(r.stderr, /wick: JobFailedError: .*no embers here: ember/);
  assert.match(r.stderr, atThrow);
  const driverErr = readFileSync(join(cluster.workDir, driverId, 'stderr'), 'utf8');
  const appId = appIdIn(driverErr);
  assert.ok(appId, driverErr);
  const app = await finalApp(appId);
  assert.equal(app.state, 'FAILED', JSON.stringify(app));
  assert.match(app.failure?.message ?? '', /no embers here: ember/);
  assert.equal(app.failure?.location?.line, THROW_LINE);
  const s = await cluster.watch.waitFor(
    (s) => cluster.watch.driver(s, driverId)?.state === 'FAILED',
  );
  assert.ok(cluster.watch.driver(s, driverId));
  const { text } = await statusOf(appId);
  assert.match(text, /FAILED/);
  assert.match(text, atThrow);
  await cluster.assertOnlyClusterLeft();
});

test("a killed app's executors say KILLED once their workers have reported, not EXITED with exit 0", {
  timeout: 90_000,
}, async (t) => {
  const p = startWick(['submit', '--master', cluster.url, join(fixtures, 'until-killed.ts')], {
    mark: cluster.mark,
  });
  killWhenDone(t, p);
  const appId = await eventually(t.signal, () => appIdIn(p.stderr()));
  await eventually(t.signal, () =>
    (cluster.executorOutput(appId, 'stderr').match(/Running task/g) ?? []).length === 2 ||
    (cluster.executorOutput(appId).match(/Running task/g) ?? []).length === 2
      ? true
      : undefined,
  );
  const kill = await runWick(['kill', appId, '--master', cluster.url]);
  assert.equal(kill.code, 0, kill.stderr);
  await p.exited;
  // The master killed them; each worker's report of how the process ended comes after.
  const s = await cluster.watch.waitFor((s) => {
    const app = cluster.watch.app(s, appId);
    return (
      app?.state === 'KILLED' &&
      app.removedExecutors.length === 2 &&
      app.removedExecutors.every((e) => e.message !== undefined)
    );
  });
  const app = cluster.watch.app(s, appId);
  for (const e of app?.removedExecutors ?? []) {
    assert.equal(e.state, 'KILLED', JSON.stringify(e));
    assert.notEqual(e.exitStatus, 0, JSON.stringify(e));
  }
  await cluster.assertOnlyClusterLeft();
});
