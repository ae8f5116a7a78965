/**
 * WorkDirCleanup (wick.worker.cleanup.*): directories in the work dir in which nothing changed for
 * appDataTtl go; recent ones, and those of running executors and drivers however old, stay. The
 * worker's ManualClock decides "now" and when the periodic cleanup runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { waitFor } from '../helpers/processes.js';
import { app, driverLaunch, MockMaster, registeredWorker } from '../helpers/workerHarness.js';

checkNothingLeftRunning();

const HOUR = 3600_000;

/** Sets the modification time of `path` and everything under it to `ms`. */
function age(path: string, ms: number): void {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path)) age(join(path, name), ms);
  }
  utimesSync(path, ms / 1000, ms / 1000);
}

/** work/<name>/0/stdout, all of it last modified at `ms`. */
function appDir(workDir: string, name: string, ms: number): string {
  const dir = join(workDir, name);
  mkdirSync(join(dir, '0'), { recursive: true });
  writeFileSync(join(dir, '0', 'stdout'), 'log');
  age(dir, ms);
  return dir;
}

async function setup(t: TestContext, conf: Record<string, string>) {
  const m = await MockMaster.start(t);
  const w = await registeredWorker(t, m, { conf });
  return { m, w };
}

test('removes what is older than the TTL, never a running app or driver, nor recent data', async (t) => {
  const { m, w } = await setup(t, { 'wick.worker.cleanup.appDataTtl': '1h' });
  const now = w.clock.now();
  const old = now - 2 * HOUR;

  const running = 'app-20261130120000-0001';
  await m.launchRunning(running, 0, app(['sleep', '300']));
  const driverId = 'driver-20261130120000-0001';
  const appPath = join(w.root, 'driver.sh');
  writeFileSync(appPath, 'exec sleep 300');
  m.worker().send(driverLaunch(driverId, appPath, { argv: ['bash', '{{USER_APP}}'] }));
  await waitFor('the driver', async () => ((await w.state()).drivers[0]?.pid ?? 0) > 0, t.signal);
  age(join(w.workDir, running), old);
  age(join(w.workDir, driverId), old);

  const stale = appDir(w.workDir, 'app-20261130000000-0009', old);
  const empty = join(w.workDir, 'app-20261130000000-0010');
  mkdirSync(empty);
  const fresh = appDir(w.workDir, 'app-20261130000000-0011', now - 10 * 60_000);
  // Old, except for one file deep inside that was written recently.
  const mixed = appDir(w.workDir, 'app-20261130000000-0012', old);
  writeFileSync(join(mixed, '0', 'stderr'), 'recent');
  utimesSync(join(mixed, '0', 'stderr'), now / 1000, now / 1000);
  // Plain files in the work dir are not application data.
  const file = join(w.workDir, 'notes.txt');
  writeFileSync(file, 'x');
  age(file, old);

  // Where the worker's standby executor waits, idle for longer than the TTL.
  const standby = appDir(w.workDir, '.prestart', old);

  await w.worker.workDirCleaner.run();
  assert.ok(existsSync(standby), "the worker's own folder kept");
  assert.equal(existsSync(stale), false, 'stale app dir removed');
  assert.equal(existsSync(empty), false, 'empty app dir removed');
  assert.ok(existsSync(fresh), 'recent app dir kept');
  assert.ok(existsSync(mixed), 'app dir with a recent file kept');
  assert.ok(existsSync(join(w.workDir, running, '0', 'stdout')), "running app's dir kept");
  assert.ok(existsSync(join(w.workDir, driverId, 'stdout')), "running driver's dir kept");
  assert.ok(existsSync(file), 'plain file kept');
});

test('with wick.worker.cleanup.enabled, it runs every cleanup.interval once registered', async (t) => {
  const { w } = await setup(t, {
    'wick.worker.cleanup.enabled': 'true',
    'wick.worker.cleanup.interval': '30m',
    'wick.worker.cleanup.appDataTtl': '1h',
  });
  assert.equal(w.clock.pendingTimers(), 2, 'heartbeat and cleanup');
  const stale = appDir(w.workDir, 'app-20261130000000-0001', w.clock.now() - 2 * HOUR);
  w.clock.advance(30 * 60_000 - 1);
  await w.barrier();
  assert.ok(existsSync(stale), 'not before the interval');
  w.clock.advance(1);
  await waitFor('the cleanup', () => !existsSync(stale), t.signal);
  // And again, an interval later.
  const stale2 = appDir(w.workDir, 'app-20261130000000-0002', w.clock.now() - 2 * HOUR);
  w.clock.advance(30 * 60_000);
  await waitFor('the second cleanup', () => !existsSync(stale2), t.signal);
});

test('without wick.worker.cleanup.enabled, nothing is scheduled', async (t) => {
  const { w } = await setup(t, { 'wick.worker.cleanup.interval': '1s' });
  assert.equal(w.clock.pendingTimers(), 1, 'the heartbeat only');
});

test("after a crash: stale applications' local dirs go; a running app's, an unfinished one's, recent ones and other entries stay", async (t) => {
  const { m, w } = await setup(t, { 'wick.worker.cleanup.appDataTtl': '1h' });
  const now = w.clock.now();
  const old = now - 2 * HOUR;
  /** What a worker that crashed left: <local>/wick-executor-<appId>-XXXXXX/blockmgr-0/…. */
  const localDir = (appId: string, ms: number) => {
    const dir = join(w.localDir, `wick-executor-${appId}-Ab12Cd`);
    mkdirSync(join(dir, 'blockmgr-0'), { recursive: true });
    writeFileSync(join(dir, 'blockmgr-0', 'shuffle_0_0_0.data'), 'x');
    age(dir, ms);
    return dir;
  };
  const stale = localDir('app-20261130000000-0001', old);
  const fresh = localDir('app-20261130000000-0002', now - 10 * 60_000);
  // Not a local dir of Wick's, however old: a local dir root is often the shared temp folder.
  const foreign = join(w.localDir, 'someone-elses-folder');
  mkdirSync(foreign, { recursive: true });
  age(foreign, old);

  const running = 'app-20261130120000-0003';
  await m.launchRunning(running, 0, app(['sleep', '300']));
  // An application still running whose executor here ended: with the shuffle service, its map
  // outputs are still served from its local dir.
  const ended = 'app-20261130120000-0004';
  const from = m.rec.mark;
  m.launchExecutor(ended, 0, app(['true']));
  await m.executorState(ended, 0, 'EXITED', from);
  const kept = [
    ...w.worker.appDirectories.existing(running),
    ...w.worker.appDirectories.existing(ended),
  ];
  assert.equal(kept.length, 2);
  for (const d of kept) age(d, old);

  await w.worker.workDirCleaner.run();
  assert.equal(existsSync(stale), false, "a stale application's local dir removed");
  assert.ok(existsSync(fresh), 'a recent one kept');
  assert.ok(existsSync(foreign), 'an entry not named as a local dir kept');
  for (const d of kept) assert.ok(existsSync(d), `${d} kept`);
});
