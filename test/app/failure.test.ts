/**
 * Failure is a state (issue 18): against one real local cluster, an application whose tasks
 * throw, submitted in client and in cluster mode, ends FAILED — in the master's state (with its
 * failure and the user's file and line), in /json and in `wick status` — and the stacks that the
 * driver and the executors print name the user's .ts file and the line that threw, not a compiled
 * copy or `wick-task-function.js`. A driver that throws at top level prints its real error. A
 * normal Pi still ends FINISHED, with no failure.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { appIdIn, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import { runWick } from '../helpers/cli.js';
import { uiFetch } from '../helpers/webUi.js';

let cluster: SharedCluster;
const fixtures = join(import.meta.dirname, '..', 'fixtures', 'apps');
const throws = join(fixtures, 'throws.ts');
const throwsAtTop = join(fixtures, 'throws-at-top.ts');
const pi = join(import.meta.dirname, '..', '..', 'examples', 'pi.ts');
/** The line of throws.ts that throws (the fixture says so too). */
const THROW_LINE = 15;

before(async () => {
  cluster = await startSharedCluster();
});

after(async () => {
  await cluster?.stop();
});

function submit(args: string[]) {
  return runWick(['submit', '--master', cluster.url, ...args], { mark: cluster.mark });
}

async function sparkJsonApp(appId: string): Promise<Record<string, unknown> | undefined> {
  const res = await uiFetch(`${cluster.master.webUiUrl}/json`);
  assert.equal(res.status, 200);
  const json = (await res.json()) as Record<string, Record<string, unknown>[]>;
  return [...(json.activeapps ?? []), ...(json.completedapps ?? [])].find((a) => a.id === appId);
}

async function statusJsonApp(appId: string): Promise<Record<string, unknown> | undefined> {
  const r = await runWick(['status', '--json', '--master', cluster.url], { mark: cluster.mark });
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout) as Record<string, Record<string, unknown>[]>;
  return [...(json.activeapps ?? []), ...(json.completedapps ?? [])].find((a) => a.id === appId);
}

test('client mode: a job whose task throws exits 1, names throws.ts:15 (driver and executors), and its app is FAILED everywhere', {
  timeout: 90_000,
}, async () => {
  const r = await submit([throws]);
  assert.equal(r.code, 1, r.stderr);
  const at = new RegExp(`at \\S*${'throws.ts'}:${THROW_LINE}:\\d+`);
  // The driver prints the aborted job as `wick: <name>: <message>` and the stack.
  assert.match(
    r.stderr,
    /wick: JobFailedError: Job aborted due to stage failure: .*Error: bad value 3/,
  );
  assert.match(r.stderr, new RegExp(`    at ${throws.replace(/[.]/g, '\\.')}:${THROW_LINE}:\\d+`));
  assert.doesNotMatch(r.stderr, /wick-task-function\.js/);
  // The driver's error shows the user's frames, never Wick's minified bundle ones.
  const printed = r.stderr.slice(r.stderr.indexOf('wick: JobFailedError'));
  assert.doesNotMatch(printed, / {4}at .*dist\/(cli\/main|task-worker|wick-lib)\.cjs/, printed);
  assert.match(printed, /… \d+ frames? in Wick \(WICK_DEBUG=1 shows them\)/);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);

  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FAILED');
  const failure = cluster.watch.app(s, appId)?.failure;
  assert.ok(failure, 'the FAILED app carries its failure');
  assert.match(failure.message, /^JobFailedError: Job aborted due to stage failure/);
  assert.equal(failure.location?.file, throws);
  assert.equal(failure.location?.line, THROW_LINE);
  assert.match(failure.stack ?? '', at);
  // The executors' own stderr (their log) says the same line.
  assert.match(cluster.executorOutput(appId, 'stderr'), at);

  assert.equal((await sparkJsonApp(appId))?.state, 'FAILED', '/json');
  assert.equal((await statusJsonApp(appId))?.state, 'FAILED', 'wick status --json');
  const text = await runWick(['status', appId, '--master', cluster.url], { mark: cluster.mark });
  assert.match(text.stdout, new RegExp(`${appId}  throws  FAILED`));
  assert.match(
    text.stdout,
    new RegExp(
      `failed: JobFailedError: .*\\(at ${throws.replace(/[.]/g, '\\.')}:${THROW_LINE}:\\d+\\)`,
    ),
  );
  await cluster.assertOnlyClusterLeft();
});

test('cluster mode: the driver on a worker fails, its app FAILED with the line, the driver FAILED', {
  timeout: 90_000,
}, async () => {
  const r = await submit([
    '--deploy-mode',
    'cluster',
    '--wait',
    '--name',
    'throws-cluster',
    throws,
  ]);
  assert.equal(r.code, 1, r.stderr);
  const driverId = r.stdout.split('\n')[0] as string;
  assert.match(driverId, /^driver-/);
  assert.match(r.stderr, new RegExp(`Driver ${driverId} ended FAILED`));
  const driverErr = readFileSync(join(cluster.workDir, driverId, 'stderr'), 'utf8');
  const appId = appIdIn(driverErr);
  assert.ok(appId, driverErr);
  const s = await cluster.watch.waitFor(
    (s) =>
      cluster.watch.app(s, appId)?.state === 'FAILED' &&
      cluster.watch.driver(s, driverId)?.state === 'FAILED',
  );
  const app = cluster.watch.app(s, appId);
  assert.ok(app?.failure?.location, JSON.stringify(app?.failure));
  // The driver runs the tree its worker fetched; the location is the file that was submitted.
  assert.equal(app.failure.location.file, throws);
  assert.equal(app.failure.location.line, THROW_LINE);
  assert.match(driverErr, /wick: JobFailedError: /);
  assert.doesNotMatch(driverErr, / {4}at .*dist\/(cli\/main|task-worker|wick-lib)\.cjs/);
  assert.match(driverErr, new RegExp(`throws\\.ts:${THROW_LINE}:\\d+`));
  await cluster.assertOnlyClusterLeft();
});

test('a driver that throws at top level prints its error, name and message, and the file:line', {
  timeout: 60_000,
}, async () => {
  const r = await submit([throwsAtTop, '3']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /wick: RangeError: need at least 10 slices, got 3\n/);
  assert.match(
    r.stderr,
    new RegExp(`    at check \\(${throwsAtTop.replace(/[.]/g, '\\.')}:7:11\\)`),
  );
  // Issue 18's case: the app's own JSON.parse of an empty input, which printed only the message.
  const dir = mkdtempSync(join(tmpdir(), 'wick-test-json-'));
  try {
    const app = join(dir, 'reads-json.mjs');
    writeFileSync(app, "const settings = JSON.parse('');\nconsole.log(settings);\n");
    const j = await submit([app]);
    assert.equal(j.code, 1, j.stderr);
    assert.match(j.stderr, /^wick: SyntaxError: Unexpected end of JSON input\n/m);
    assert.match(j.stderr, new RegExp(`    at .*${app.replace(/[.]/g, '\\.')}:1:\\d+`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a normal Pi still ends FINISHED, with no failure', { timeout: 60_000 }, async () => {
  const r = await submit([pi, '4']);
  assert.equal(r.code, 0, r.stderr);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  assert.equal(cluster.watch.app(s, appId)?.failure, undefined);
  assert.equal((await sparkJsonApp(appId))?.state, 'FINISHED');
});

test('a driver that calls process.exit(3) before stop() ends its app FAILED, saying the status; exit(0) FINISHED', {
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-test-exit-'));
  try {
    for (const code of [3, 0]) {
      const app = join(dir, `exit${code}.mjs`);
      writeFileSync(
        app,
        `import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'exit ${code}' });
console.log('count', await wc.range(0, 10, 1, 2).count());
process.exit(${code});
`,
      );
      const r = await submit([app]);
      assert.equal(r.code, code, r.stderr);
      const appId = appIdIn(r.stderr);
      assert.ok(appId, r.stderr);
      const want = code === 0 ? 'FINISHED' : 'FAILED';
      const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === want);
      const failure = cluster.watch.app(s, appId)?.failure;
      if (code === 0) assert.equal(failure, undefined);
      else assert.equal(failure?.message, 'Error: the driver exited with status 3');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
