/**
 * Application ids unique across masters that share an event log dir: claims made at once by two
 * claimers give an id to exactly one; an id whose log exists is refused; old claims go. Then with
 * real processes: two masters over one dir, every `-0000` id of the coming minutes taken by
 * an earlier run's logs, register an application each at once: two ids, neither an earlier
 * one, each driver writes its own log, and the earlier logs are as they were.
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
import { test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { appIdClaims, CLAIM_KEPT_MS, CLAIMS_DIR } from '../../backend/eventlog/appIdClaims.js';
import { readEventLog } from '../../backend/eventlog/readEventLog.js';
import { appId as makeAppId } from '../../backend/master/ids.js';
import { eventually } from '../helpers/apps.js';
import { startMaster } from '../helpers/cluster.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-test-appids-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('of two masters claiming one id at once, exactly one gets it; the next is free', async (t) => {
  const dir = tempDir(t);
  const a = appIdClaims(dir);
  const b = appIdClaims(dir);
  const id = 'app-20260101000000-0000';
  const got = await Promise.all([a.claim(id), b.claim(id), a.claim(id), b.claim(id)]);
  assert.deepEqual(got.filter(Boolean).length, 1, `one claim of four wins: ${JSON.stringify(got)}`);
  assert.equal(await b.claim('app-20260101000000-0001'), true);
});

test('an id whose log exists, in any layout, is refused', async (t) => {
  const dir = tempDir(t);
  const claims = appIdClaims(dir);
  const names = [
    'app-20260101000000-0001',
    'app-20260101000000-0002.inprogress',
    'app-20260101000000-0003.gz',
    'app-20260101000000-0004.gz.inprogress',
  ];
  for (const n of names) writeFileSync(join(dir, n), '');
  mkdirSync(join(dir, 'eventlog_v2_app-20260101000000-0005'));
  for (let i = 1; i <= 5; i++)
    assert.equal(await claims.claim(`app-20260101000000-000${i}`), false, `log ${i}`);
  assert.equal(await claims.claim('app-20260101000000-0006'), true, 'no log of that id');
});

test('claims older than CLAIM_KEPT_MS are removed, newer ones kept', async (t) => {
  const dir = tempDir(t);
  let now = Date.now();
  const claims = appIdClaims(dir, () => now);
  assert.equal(await claims.claim('app-20260101000000-0000'), true);
  const old = join(dir, CLAIMS_DIR, 'app-20260101000000-0000');
  const when = (Date.now() - CLAIM_KEPT_MS - 60_000) / 1000;
  utimesSync(old, when, when);
  now += 2 * 60_000;
  assert.equal(await claims.claim('app-20260101000000-0001'), true);
  assert.equal(existsSync(old), false, 'the old claim is gone');
  assert.deepEqual(readdirSync(join(dir, CLAIMS_DIR)), ['app-20260101000000-0001']);
});

test('claims refuse an id that is no file name, naming it', async (t) => {
  const claims = appIdClaims(tempDir(t));
  await assert.rejects(claims.claim('../x'), /"\.\.\/x"/);
});

test('two masters over one dir, whose -0000 ids an earlier run took: two new ids, two logs', {
  timeout: 180_000,
}, async (t) => {
  const dir = tempDir(t);
  // An earlier run's logs for every second of the next ten minutes: each master's first id.
  const start = Date.now();
  const earlier: string[] = [];
  for (let s = 0; s < 600; s++) {
    const name = makeAppId(start + s * 1000, 0);
    if (earlier.at(-1) === name) continue;
    earlier.push(name);
    writeFileSync(join(dir, name), 'an earlier run\n');
  }
  const conf = { 'wick.eventLog.dir': dir };
  const [m1, m2] = await Promise.all([startMaster(t, { conf }), startMaster(t, { conf })]);
  const contexts = await Promise.all(
    [m1, m2].map((m) =>
      WickContext.create({
        master: m.url,
        appName: 'claims',
        conf: { 'wick.eventLog.enabled': 'true', 'wick.eventLog.dir': dir },
      }),
    ),
  );
  const ids = contexts.map((c) => c.appId);
  const paths = contexts.map((c) => c.eventLogPath);
  await Promise.all(contexts.map((c) => c.stop()));
  assert.notEqual(ids[0], ids[1], `two masters, two ids: ${ids}`);
  for (const id of ids) {
    assert.match(id, /^app-\d{14}-\d{4}$/, "Spark's shape");
    assert.ok(!earlier.includes(id), `${id} is not an earlier run's`);
  }
  for (const [i, p] of paths.entries()) {
    assert.ok(p, `application ${ids[i]} writes a log (it did not find one there already)`);
    // stop() returns before the driver has closed its log (WickContext.close).
    await eventually(AbortSignal.timeout(60_000), () => existsSync(p) || undefined);
    const events: { event?: string; appId?: string }[] = [];
    const problems: string[] = [];
    for await (const e of readEventLog(p, { onProblem: (x) => problems.push(x.message) }))
      events.push(e as { event?: string; appId?: string });
    assert.deepEqual(problems, [], `${p} reads whole`);
    const startEvent = events.find((e) => e.event === 'WickListenerApplicationStart');
    assert.equal(startEvent?.appId, ids[i], JSON.stringify(events).slice(0, 500));
    assert.ok(events.some((e) => e.event === 'WickListenerApplicationEnd'));
  }
  for (const name of earlier)
    assert.equal(readFileSync(join(dir, name), 'utf8'), 'an earlier run\n', `${name} untouched`);
});
