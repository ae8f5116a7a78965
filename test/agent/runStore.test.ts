import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pastRuns } from '../../backend/agent/pastRuns.js';
import {
  LOST_MESSAGE,
  MAX_CLUSTER_DIRS,
  RELOAD_MESSAGE,
  RunStore,
} from '../../backend/agent/runStore.js';
import type { AppSummary } from '../../backend/protocol/state.js';

const app = (id: string, state: string, extra: Partial<AppSummary> = {}) =>
  ({
    id,
    name: `job ${id}`,
    user: 'me',
    coresGranted: 1,
    memoryPerExecutorMB: 512,
    state,
    startTime: Number(id.replace(/\D/g, '')) || 1,
    driver: { address: 'h:1', name: 'AppClient' },
    executors: [],
    removedExecutors: [],
    ...extra,
  }) as AppSummary;

function dir(t: { after: (fn: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'wick-runstore-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

test("a reload's end: running runs KILLED with why, ended ones as they were; the next agent reads them", (t) => {
  const d = dir(t);
  const a = new RunStore(d, process.pid);
  const cluster = a.newClusterDir();
  a.observe([app('app-1', 'FINISHED', { endTime: 5 }), app('app-2', 'RUNNING')], cluster);
  a.noteSubmit('app-2', '/w/job.ts', 'out1', cluster);
  a.endRunning(RELOAD_MESSAGE);
  const b = new RunStore(d, process.pid + 1);
  const byId = new Map(b.all().map((r) => [r.appId, r]));
  assert.equal(byId.get('app-1')?.state, 'FINISHED');
  assert.equal(byId.get('app-1')?.message, undefined);
  assert.equal(byId.get('app-2')?.state, 'KILLED');
  assert.equal(byId.get('app-2')?.message, RELOAD_MESSAGE);
  assert.equal(byId.get('app-2')?.file, '/w/job.ts');
});

test('runs of an agent that died without a word are KILLED by the next one; a live agent keeps its own', (t) => {
  const d = dir(t);
  const dead = new RunStore(d, deadPid());
  dead.observe([app('app-1', 'RUNNING')], dead.newClusterDir());
  // This process plays another live agent: its run stays RUNNING.
  const live = new RunStore(d, process.pid);
  live.observe([app('app-2', 'WAITING')], live.newClusterDir());
  const next = new RunStore(d, process.pid + 100000);
  const byId = new Map(next.all().map((r) => [r.appId, r]));
  assert.equal(byId.get('app-1')?.state, 'KILLED');
  assert.equal(byId.get('app-1')?.message, LOST_MESSAGE);
  assert.equal(byId.get('app-2')?.state, 'WAITING');
});

test('driver output is kept in a file per submit; old cluster dirs go past the bound', (t) => {
  const d = dir(t);
  const s = new RunStore(d, process.pid);
  s.appendOutput('out1', 'Pi is roughly 3.14\n');
  s.appendOutput('out1', '[the driver exited with status 0]\n');
  assert.equal(
    readFileSync(s.outputPath('out1'), 'utf8'),
    'Pi is roughly 3.14\n[the driver exited with status 0]\n',
  );
  const made: string[] = [];
  for (let i = 0; i < MAX_CLUSTER_DIRS + 2; i++)
    made.push(s.newClusterDir(Date.UTC(2026, 0, 1, 0, 0, i)));
  const kept = readdirSync(s.clustersDir).map((n) => join(s.clustersDir, n));
  assert.deepEqual(kept, made.slice(-MAX_CLUSTER_DIRS));
});

test('a runs.json that is not one is set aside, named, and the store starts empty', (t) => {
  const d = dir(t);
  writeFileSync(join(d, 'runs.json'), '{"runs": 3}');
  const warned: string[] = [];
  const s = new RunStore(d, process.pid, (m) => warned.push(m));
  assert.deepEqual(s.all(), []);
  assert.match(
    warned.join('\n'),
    /runs\.json is not a list of runs .*set aside as runs\.json\.bad/,
  );
  assert.equal(readFileSync(join(d, 'runs.json.bad'), 'utf8'), '{"runs": 3}');
});

test("past runs: other clusters' runs only, with their files on disk, and logs removed where gone", async (t) => {
  const d = dir(t);
  const s = new RunStore(d, process.pid);
  const old = s.newClusterDir(1_000);
  s.observe([app('app-1', 'FINISHED', { endTime: 9 }), app('app-2', 'KILLED')], old);
  s.noteSubmit('app-1', '/w/pi.ts', 'o1', old);
  s.appendOutput('o1', 'hi\n');
  mkdirSync(join(old, 'app-1', '0'), { recursive: true });
  writeFileSync(join(old, 'app-1', '0', 'stdout'), 'x');
  const now = s.newClusterDir(2_000);
  s.observe([app('app-3', 'RUNNING')], now);
  const runs = await pastRuns(s, now, undefined);
  assert.deepEqual(
    runs.map((r) => r.appId),
    ['app-2', 'app-1'],
    "newest first, the running cluster's own left to the live state",
  );
  const one = runs.find((r) => r.appId === 'app-1');
  assert.deepEqual(one?.output, { path: s.outputPath('o1'), exists: true });
  assert.deepEqual(one?.logs.files, [
    { execId: 0, stream: 'stdout', path: join(old, 'app-1', '0', 'stdout') },
  ]);
  assert.equal(one?.logs.removed, false);
  assert.equal(runs.find((r) => r.appId === 'app-2')?.logs.removed, true);
});

test("a run's event log: its jobs; it ends a run the master had not seen end, never one the master KILLED", async (t) => {
  const d = dir(t);
  const logs = join(d, 'event-logs');
  mkdirSync(logs);
  const line = (e: object) => `${JSON.stringify(e)}\n`;
  const start = (appId: string) =>
    line({ event: 'WickListenerApplicationStart', appId, appName: appId, user: 'me', time: 1 });
  const end = line({
    event: 'WickListenerApplicationEnd',
    time: 9,
    failure: 'JobFailedError: Master removed our application: KILLED',
  });
  writeFileSync(join(logs, 'app-1'), start('app-1') + end);
  writeFileSync(join(logs, 'app-2'), start('app-2') + end);
  const s = new RunStore(d, process.pid);
  const old = s.newClusterDir(1_000);
  s.observe([app('app-1', 'KILLED'), app('app-2', 'RUNNING')], old);
  // app-2's state was never an end: as if its agent's records stopped at RUNNING.
  const { HistoryProvider } = await import('../../backend/history/HistoryProvider.js');
  const runs = await pastRuns(s, s.newClusterDir(2_000), new HistoryProvider({ logDir: logs }));
  const byId = new Map(runs.map((r) => [r.appId, r]));
  assert.equal(byId.get('app-1')?.state, 'KILLED');
  assert.equal(byId.get('app-1')?.failure, undefined);
  assert.equal(byId.get('app-2')?.state, 'FAILED');
  assert.match(byId.get('app-2')?.failure?.message ?? '', /Master removed our application/);
  assert.equal(byId.get('app-2')?.eventLog, join(logs, 'app-2'));
  assert.deepEqual(byId.get('app-2')?.jobs, { succeeded: 0, failed: 0, running: 0 });
});
