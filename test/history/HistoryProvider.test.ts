/**
 * The provider over real files in a temp folder, written by the driver's own EventLogWriter in
 * every layout (plain, gzip, rolled; complete, running, cut, garbage).
 */
import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EventLogWriter } from '../../backend/eventlog/EventLogWriter.js';
import { HistoryProvider } from '../../backend/history/HistoryProvider.js';
import type { WickListenerEvent } from '../../backend/protocol/listener.js';
import { ManualClock } from '../../backend/util/clock.js';
import { appEvents } from './appEvents.js';

function folder(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'wick-history-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function writeLog(
  dir: string,
  appId: string,
  o: {
    compress?: boolean;
    rollAtBytes?: number;
    close?: boolean;
    t0?: number;
    events?: WickListenerEvent[];
  } = {},
): Promise<EventLogWriter> {
  const w = await EventLogWriter.start({
    dir,
    appId,
    compress: o.compress ?? false,
    ...(o.rollAtBytes ? { rollAtBytes: o.rollAtBytes } : {}),
  });
  for (const e of o.events ?? appEvents(appId, o.t0, o.close !== false)) w.write(e);
  if (o.close === false) await w.flush();
  else await w.close();
  return w;
}

function provider(
  dir: string,
  warnings: string[] = [],
  more: Partial<ConstructorParameters<typeof HistoryProvider>[0]> = {},
) {
  return new HistoryProvider({ logDir: dir, warn: (m) => warnings.push(m), ...more });
}

test('every layout is listed from its first and last events: id, name, user, times, completed', async (t) => {
  const d = folder(t);
  const t0 = Date.UTC(2026, 11, 1);
  await writeLog(d, 'app-plain', { t0 });
  await writeLog(d, 'app-gz', { t0: t0 + 1000, compress: true });
  await writeLog(d, 'app-rolled', { t0: t0 + 2000, rollAtBytes: 600 });
  await writeLog(d, 'app-running', { t0: t0 + 3000, close: false });
  const p = provider(d);
  const scan = await p.scan();
  assert.deepEqual(scan, { read: 4, unchanged: 0, bad: [] });
  const apps = p.applications();
  assert.deepEqual(
    apps.map((a) => [
      a.appId,
      a.name,
      a.user,
      a.startTime - t0,
      a.endTime === undefined ? undefined : a.endTime - t0,
      a.completed,
      a.rolled,
      a.compressed,
    ]),
    [
      ['app-running', 'name of app-running', 'ann', 3000, undefined, false, false, false],
      ['app-rolled', 'name of app-rolled', 'ann', 2000, 2060, true, true, false],
      ['app-gz', 'name of app-gz', 'ann', 1000, 1060, true, false, true],
      ['app-plain', 'name of app-plain', 'ann', 0, 60, true, false, false],
    ],
  );
  assert.ok(apps.every((a) => a.fileSize > 0 && a.lastUpdated > 0 && !a.truncated));
  assert.equal(apps[0]?.logName, 'app-running.inprogress');
  assert.equal(apps[1]?.logName, 'eventlog_v2_app-rolled');
});

test('a scan reads only the logs that are new or changed (by size and time)', async (t) => {
  const d = folder(t);
  await writeLog(d, 'app-a');
  const running = await writeLog(d, 'app-b', { close: false });
  const p = provider(d);
  assert.equal((await p.scan()).read, 2);
  assert.deepEqual(await p.scan(), { read: 0, unchanged: 2, bad: [] });
  running.write({ event: 'WickListenerApplicationEnd', time: Date.UTC(2026, 11, 1, 13) });
  await running.close();
  const s = await p.scan();
  assert.equal(s.read, 1, 'the log that changed (now under its final name)');
  assert.equal(p.application('app-b')?.completed, true);
  rmSync(join(d, 'app-a'));
  await p.scan();
  assert.deepEqual(
    p.applications().map((a) => a.appId),
    ['app-b'],
  );
});

test('a garbage file is named in one warning and skipped; a changed one is looked at again', async (t) => {
  const d = folder(t);
  await writeLog(d, 'app-good');
  writeFileSync(join(d, 'app-garbage'), 'this is not an event log\n');
  writeFileSync(join(d, 'app-other'), '{"Event":"SparkListenerLogStart"}\n');
  writeFileSync(join(d, '.hidden'), 'ignored');
  const warnings: string[] = [];
  const p = provider(d, warnings);
  const s = await p.scan();
  assert.deepEqual(
    p.applications().map((a) => a.appId),
    ['app-good'],
  );
  assert.equal(s.bad.length, 2);
  assert.equal(warnings.length, 2, warnings.join('\n'));
  assert.match(
    warnings.find((w) => w.includes('app-garbage')) ?? '',
    /app-garbage: line 1 is not a JSON event/,
  );
  assert.match(
    warnings.find((w) => w.includes('app-other')) ?? '',
    /app-other does not begin with an application's start \(its first event is "SparkListenerLogStart"\)/,
  );
  await p.scan();
  assert.equal(warnings.length, 2, 'no second warning for an unchanged file');
  appendFileSync(join(d, 'app-garbage'), 'still not\n');
  await p.scan();
  assert.equal(warnings.length, 3);
});

test('a log cut inside a line is listed incomplete, and replays up to the break', async (t) => {
  const d = folder(t);
  const src = folder(t);
  const w = await writeLog(src, 'app-cut');
  const whole = readFileSync(w.path);
  // Into the middle of the 15th line, after job 0's end.
  let at = 0;
  for (let i = 0; i < 14; i++) at = whole.indexOf(10, at) + 1;
  writeFileSync(join(d, 'app-cut'), whole.subarray(0, at + 10));
  const warnings: string[] = [];
  const p = provider(d, warnings);
  await p.scan();
  const a = p.application('app-cut');
  assert.equal(a?.completed, false);
  assert.equal(a?.truncated, true);
  assert.match(warnings[0] ?? '', /app-cut ends inside a line.*listed as incomplete/);
  const seen: WickListenerEvent[] = [];
  const r = await p.forEachEvent('app-cut', (e) => seen.push(e));
  assert.deepEqual(seen, appEvents('app-cut').slice(0, 14));
  assert.equal(seen.at(-1)?.event, 'WickListenerJobEnd');
  assert.equal(r?.problems.length, 1);
  assert.equal(r?.problems[0]?.truncated, true);
  assert.equal(r?.problems[0]?.line, 15);
  const loaded = await p.load('app-cut');
  assert.equal(loaded?.summary.totals.jobsSucceeded, 1);
});

test('listing reads the start and the last chunk only: a bad line in the middle shows when the app is loaded', async (t) => {
  const d = folder(t);
  const events = appEvents('app-big');
  const end = events.pop() as WickListenerEvent;
  // 5,000 task events in the middle, then one line of garbage, then more and the end.
  for (let i = 0; i < 5000; i++)
    events.push({
      event: 'WickListenerTaskEnd',
      taskId: 100 + i,
      executorId: '0',
      state: 'FINISHED',
    });
  const w = await writeLog(d, 'app-big', { events });
  appendFileSync(w.path, 'garbage in the middle\n');
  appendFileSync(
    w.path,
    `${JSON.stringify({ event: 'WickListenerJobStart', jobId: 7, stageIds: [], time: 1 })}\n${JSON.stringify(end)}\n`,
  );
  const warnings: string[] = [];
  const p = provider(d, warnings, { endChunkBytes: 1024 });
  await p.scan();
  assert.equal(p.application('app-big')?.completed, true, 'found its end in the last KiB');
  assert.deepEqual(warnings, []);
  const loaded = await p.load('app-big');
  assert.match(
    loaded?.replay.problems[0]?.message ?? '',
    new RegExp(`line ${events.length + 1} is not a JSON event`),
  );
  assert.equal(loaded?.summary.totals.tasksCompleted, 3 + 5000);
});

test('replay gives every event in order, skips what is no event with one warning, and loads are kept', async (t) => {
  const d = folder(t);
  const events = appEvents('app-r');
  const w = await EventLogWriter.start({ dir: d, appId: 'app-r', compress: true });
  for (const e of events.slice(0, 3)) w.write(e);
  w.write({ event: 'WickListenerJobStart', jobId: -1, stageIds: [], time: 0 });
  for (const e of events.slice(3)) w.write(e);
  await w.close();
  await writeLog(d, 'app-s');
  const warnings: string[] = [];
  const p = provider(d, warnings, { retainedApplications: 1 });
  await p.scan();
  const seen: WickListenerEvent[] = [];
  const r = await p.forEachEvent('app-r', (e) => seen.push(e));
  assert.deepEqual(seen, events);
  assert.deepEqual([r?.events, r?.skipped, r?.problems], [events.length, 1, []]);
  assert.match(
    warnings[0] ?? '',
    /app-r.gz: 1 event\(s\) skipped, the first a WickListenerJobStart that does not match its schema \(\/jobId/,
  );
  assert.equal(await p.forEachEvent('app-none', () => {}), undefined);
  const first = await p.load('app-r');
  assert.equal(await p.load('app-r'), first, 'kept');
  await p.load('app-s');
  assert.notEqual(
    await p.load('app-r'),
    first,
    'dropped for app-s (retainedApplications 1), loaded again',
  );
});

test('the cleaner deletes what is older than maxAge, then the oldest completed past maxNum', async (t) => {
  const d = folder(t);
  const clock = new ManualClock(Date.now());
  const old = await writeLog(d, 'app-old');
  await writeLog(d, 'app-young');
  await writeLog(d, 'app-running', { close: false });
  writeFileSync(join(d, 'app-junk'), 'junk\n');
  const tenDaysAgo = (clock.now() - 10 * 86_400_000) / 1000;
  utimesSync(old.path, tenDaysAgo, tenDaysAgo);
  utimesSync(join(d, 'app-junk'), tenDaysAgo, tenDaysAgo);
  const p = provider(d, [], { clock });
  const removed = await p.clean({ intervalMs: 1000, maxAgeMs: 7 * 86_400_000, maxNum: 100 });
  assert.deepEqual(removed.sort(), [join(d, 'app-junk'), old.path]);
  assert.deepEqual(
    p
      .applications()
      .map((a) => a.appId)
      .sort(),
    ['app-running', 'app-young'],
  );
  assert.deepEqual(await p.clean({ intervalMs: 1000, maxAgeMs: 7 * 86_400_000, maxNum: 1 }), [
    join(d, 'app-young'),
  ]);
  assert.deepEqual(
    p.applications().map((a) => a.appId),
    ['app-running'],
  );
});

test('started, it looks again every update interval and sees a new log; stopped, it does not', async (t) => {
  const d = folder(t);
  const clock = new ManualClock(Date.now());
  const p = provider(d, [], { clock, updateIntervalMs: 10_000 });
  await p.start();
  t.after(() => p.stop());
  assert.deepEqual(p.applications(), []);
  await writeLog(d, 'app-new');
  clock.advance(9_999);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(p.applications(), [], 'not before the interval');
  clock.advance(1);
  while (p.applications().length === 0) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(
    p.applications().map((a) => a.appId),
    ['app-new'],
  );
  p.stop();
  await writeLog(d, 'app-later');
  clock.advance(60_000);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(p.applications().length, 1, 'no timer scanned after stop');
  await p.scan();
  assert.equal(p.applications().length, 2, 'an explicit scan still works');
});
