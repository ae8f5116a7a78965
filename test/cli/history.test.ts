/**
 * The history service end to end, with real processes: a real driver (`wick submit --master
 * local`, whose embedded local cluster turns event logs on by default) runs an application of two
 * jobs; `wick history` lists it from its event log, `wick status <app-id>` prints its jobs once
 * its cluster is gone, a cut copy is listed as incomplete and read up to the break, a garbage file
 * is named and skipped, and `wick history-server` serves Spark's /api/v1/applications, behind the
 * cluster's login, after cleaning an old log and again after a restart.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AppDir, killWhenDone } from '../helpers/apps.js';
import { assertBuilt, runWick, startWick } from '../helpers/cli.js';
import { uiFetch } from '../helpers/webUi.js';

const TWO_JOBS = `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'Two Jobs' });
const n = await wc.parallelize([1, 2, 3, 4], 2).count();
const words = await wc
  .parallelize(['a b', 'b c'], 2)
  .flatMap((l: string) => l.split(' '))
  .map((w: string): [string, number] => [w, 1])
  .reduceByKey((a: number, b: number) => a + b, 2)
  .collect();
console.log('counted', n, 'words', words.length);
await wc.stop();
`;

const state = mkdtempSync(join(tmpdir(), 'wick-test-state-'));
const logDir = join(state, 'wick', 'event-logs');
const env = { XDG_STATE_HOME: state };
const apps = new AppDir();
let appId = '';
let logPath = '';

before(async () => {
  assertBuilt();
  const app = apps.write('twojobs.ts', TWO_JOBS);
  const run = startWick(['submit', '--master', 'local', app], { env, cwd: apps.path });
  run.child.stdin?.end();
  const guard = setTimeout(() => run.child.kill('SIGKILL'), 240_000);
  const { code } = await run.exited;
  clearTimeout(guard);
  assert.equal(code, 0, run.stderr());
  assert.match(run.stdout(), /counted 4 words 3/);
  assert.match(run.stderr(), /Writing the event log to /);
  // Hidden entries are the master's (.app-ids: ids claimed), never an application's log.
  const names = existsSync(logDir) ? readdirSync(logDir).filter((n) => !n.startsWith('.')) : [];
  assert.equal(names.length, 1, `one event log, written with no setting: ${names.join(', ')}`);
  appId = names[0] as string;
  assert.match(appId, /^app-\d{14}-\d{4}$/, 'named by its id, no longer .inprogress');
  logPath = join(logDir, appId);
});

after(() => {
  apps.remove();
  rmSync(state, { recursive: true, force: true });
});

test('wick history lists the app COMPLETED with its two jobs; with its id, its jobs and stages', {
  timeout: 120_000,
}, async () => {
  // The default folder: where the driver wrote it (XDG_STATE_HOME), with no --dir.
  const list = await runWick(['history'], { env });
  assert.equal(list.code, 0, list.stderr);
  const row = list.stdout.split('\n').find((l) => l.startsWith(appId));
  assert.ok(row, list.stdout);
  assert.match(row, /\bTwo Jobs\s+COMPLETED\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+[\d.]+ m?s\s+2\/0$/);
  assert.match(list.stdout, new RegExp(`Event logs in ${logDir}: 1 application`));

  const one = await runWick(['history', appId, '--dir', logDir]);
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, /Jobs: 2 succeeded, 0 failed, 0 running/);
  assert.match(one.stdout, /^ {2}0\s+SUCCEEDED\s+1\s+2\/2 /m, 'job 0: its one stage, 2 tasks');
  assert.match(
    one.stdout,
    /^ {2}1\s+SUCCEEDED\s+2\s+4\/4 /m,
    'job 1: a map stage and a result stage',
  );
  assert.match(one.stdout, /Stages: 3 completed, 0 failed, 0 skipped/);
  assert.match(one.stdout, /ShuffleMapStage 1 \(shuffle 0\)/);

  const none = await runWick(['history', 'app-20000101000000-0000', '--dir', logDir]);
  assert.equal(none.code, 1);
  assert.match(
    none.stderr,
    new RegExp(
      `No event log of application "app-20000101000000-0000" in ${logDir} \\(it has 1: ${appId}\\)`,
    ),
  );
});

test('wick status <app-id> prints its jobs and stages from its event log once its master is gone', {
  timeout: 120_000,
}, async () => {
  // The embedded cluster stopped with the submit: nothing listens on this master's port.
  const r = await runWick(['status', appId, '--master', 'wick://127.0.0.1:1'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^The master at wick:\/\/127\.0\.0\.1:1 did not answer .*; from its event log:$/m,
  );
  assert.match(r.stdout, new RegExp(`^${appId}  Two Jobs  COMPLETED`, 'm'));
  assert.match(r.stdout, /Jobs: 2 succeeded, 0 failed, 0 running/);
  // A driver id has no event log: the master's error, as before.
  const d = await runWick(
    ['status', 'driver-20000101000000-0000', '--master', 'wick://127.0.0.1:1'],
    { env },
  );
  assert.equal(d.code, 1);
});

test('a log cut inside a line is listed INCOMPLETE and read up to the break; a garbage file is named and skipped', {
  timeout: 120_000,
}, async () => {
  const dir = join(state, 'cut');
  mkdirSync(dir);
  const whole = readFileSync(logPath, 'utf8');
  const lines = whole.split('\n');
  // Cut inside the line after job 1's start: job 0 ended, job 1 runs.
  const k = lines.findIndex((l) => l.includes('"WickListenerJobStart"') && l.includes('"jobId":1'));
  assert.ok(k > 0);
  const upTo = lines.slice(0, k + 1).join('\n').length + 1;
  writeFileSync(
    join(dir, appId),
    whole.slice(0, upTo + Math.floor((lines[k + 1] as string).length / 2)),
  );
  writeFileSync(join(dir, 'app-20000101000000-0001'), '\u0000\u0001 not a log at all\n');

  const list = await runWick(['history', '--dir', dir]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(
    list.stdout,
    new RegExp(
      `^${appId}\\s+Two Jobs\\s+INCOMPLETE \\(log cut short\\).*\\s1/0 \\(1 running\\)$`,
      'm',
    ),
  );
  assert.doesNotMatch(list.stdout, /app-20000101000000-0001/);
  assert.match(
    list.stderr,
    /Skipping the event log .*app-20000101000000-0001: line 1 is not a JSON event/,
  );
  assert.match(list.stderr, new RegExp(`The event log .*${appId} ends inside a line`));
  assert.equal(list.stderr.match(/app-20000101000000-0001/g)?.length, 1, 'one warning for it');

  const one = await runWick(['history', appId, '--dir', dir]);
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, new RegExp(`cut: the log ends inside line ${k + 2} `));
  assert.match(one.stdout, /Jobs: 1 succeeded, 0 failed, 1 running/);
});

test('wick history-server: the cleaner removes an old log and keeps a young one; /api/v1/applications answers logged-in requests only, and again after a restart', {
  timeout: 180_000,
}, async (t) => {
  const dir = join(state, 'served');
  mkdirSync(dir);
  writeFileSync(join(dir, appId), readFileSync(logPath));
  const oldId = 'app-20200101000000-0000';
  const oldLog = join(dir, oldId);
  writeFileSync(oldLog, readFileSync(logPath, 'utf8').replaceAll(appId, oldId));
  const monthAgo = (Date.now() - 30 * 86_400_000) / 1000;
  utimesSync(oldLog, monthAgo, monthAgo);

  const serve = async () => {
    const p = startWick(
      [
        'history-server',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--dir',
        dir,
        '--conf',
        'wick.history.fs.cleaner.enabled=true',
        '--conf',
        'wick.history.fs.cleaner.maxAge=7d',
        '--print-ready',
        '--exit-with-parent',
      ],
      { env },
    );
    killWhenDone(t, p);
    const ready = JSON.parse(await p.firstLine()) as { url: string; logDir: string };
    assert.equal(ready.logDir, dir);
    return { p, url: ready.url };
  };

  let { p, url } = await serve();
  // The cleaner ran before the server said it was ready.
  assert.equal(existsSync(oldLog), false, 'the month-old log is gone');
  assert.equal(existsSync(join(dir, appId)), true, 'the young one is kept');

  const anonymous = await fetch(`${url}/api/v1/applications`);
  assert.equal(anonymous.status, 401);
  assert.match(
    ((await anonymous.json()) as { message: string }).message,
    /wick ui-url --ui http:\/\/127\.0\.0\.1:\d+/,
  );

  const listed = async () => {
    const r = await uiFetch(`${url}/api/v1/applications`);
    assert.equal(r.status, 200);
    return (await r.json()) as { id: string; name: string; attempts: Record<string, unknown>[] }[];
  };
  const check = (got: Awaited<ReturnType<typeof listed>>) => {
    assert.deepEqual(
      got.map((a) => [a.id, a.name]),
      [[appId, 'Two Jobs']],
    );
    const at = got[0]?.attempts[0] ?? {};
    assert.equal(at.completed, true);
    assert.ok((at.duration as number) > 0);
    assert.equal(at.duration, (at.endTimeEpoch as number) - (at.startTimeEpoch as number));
    assert.match(at.startTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}GMT$/);
  };
  check(await listed());
  const running = await uiFetch(`${url}/api/v1/applications?status=running`);
  assert.deepEqual(await running.json(), []);
  const bad = await uiFetch(`${url}/api/v1/applications?status=finished`);
  assert.equal(bad.status, 400);
  assert.match(
    await bad.text(),
    /status must be \\"completed\\" or \\"running\\", got \\"finished\\"/,
  );
  const version = await uiFetch(`${url}/api/v1/version`);
  assert.match(((await version.json()) as { spark: string }).spark, /^\d+\.\d+\.\d+/);

  // A restart: a new process lists it again from the folder.
  p.child.kill('SIGTERM');
  assert.equal((await p.exited).code, 0);
  ({ p, url } = await serve());
  check(await listed());
  p.child.kill('SIGTERM');
  await p.exited;
});

test('on a local cluster an application that says wick.eventLog.enabled=false writes no log', {
  timeout: 240_000,
}, async () => {
  const app = apps.write('quiet.ts', TWO_JOBS.replace("'Two Jobs'", "'Quiet'"));
  const run = startWick(
    ['submit', '--master', 'local', '--conf', 'wick.eventLog.enabled=false', app],
    { env, cwd: apps.path },
  );
  run.child.stdin?.end();
  const { code } = await run.exited;
  assert.equal(code, 0, run.stderr());
  assert.match(run.stdout(), /counted 4 words 3/, 'it ran');
  assert.deepEqual(
    readdirSync(logDir).filter((n) => !n.startsWith('.')),
    [appId],
    'and left no log beside the first',
  );
  assert.doesNotMatch(run.stderr(), /Writing the event log/);
});
