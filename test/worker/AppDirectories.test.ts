/**
 * AppDirectories: an application's local dirs are made once, deleted once it finished and none of
 * its executors runs here, and whatever is left goes at shutdown.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setLogSink } from '../../backend/util/log.js';
import { AppDirectories } from '../../backend/worker/AppDirectories.js';

setLogSink(() => {});

function roots(t: TestContext): string[] {
  const root = mkdtempSync(join(tmpdir(), 'wick-appdirs-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  return [join(root, 'a'), join(root, 'b')];
}

test('one dir per root for each application, made on first use and the same afterwards', async (t) => {
  const dirs = new AppDirectories(roots(t), () => false);
  const first = await dirs.dirsFor('app-1');
  assert.equal(first.length, 2);
  for (const d of first) assert.ok(existsSync(d), d);
  assert.match(first[0] as string, /wick-executor-app-1-/);
  assert.deepEqual(await dirs.dirsFor('app-1'), first);
  assert.notDeepEqual(await dirs.dirsFor('app-2'), first);
});

test('a finished application keeps its dirs while an executor of it runs, then they go', async (t) => {
  let running = true;
  const dirs = new AppDirectories(roots(t), (appId) => appId === 'app-1' && running);
  const made = await dirs.dirsFor('app-1');
  await dirs.cleanupIfDone('app-1');
  assert.ok(
    made.every((d) => existsSync(d)),
    'not finished: kept',
  );
  await dirs.applicationFinished('app-1');
  assert.ok(
    made.every((d) => existsSync(d)),
    'an executor still runs: kept',
  );
  assert.deepEqual(dirs.existing('app-1'), made);
  running = false;
  await dirs.cleanupIfDone('app-1');
  assert.ok(
    made.every((d) => !existsSync(d)),
    'deleted once its last executor ended',
  );
  assert.deepEqual(dirs.existing('app-1'), []);
});

test('at shutdown every dir left is deleted, finished or not', async (t) => {
  const dirs = new AppDirectories(roots(t), () => true);
  const made = [...(await dirs.dirsFor('app-1')), ...(await dirs.dirsFor('app-2'))];
  await dirs.applicationFinished('app-2');
  await dirs.removeAll();
  assert.ok(made.every((d) => !existsSync(d)));
  assert.deepEqual(dirs.existing('app-1'), []);
});
