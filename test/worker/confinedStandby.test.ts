/**
 * A confining worker's standby executor on a real cluster (wick.executor.sandbox=bwrap, the
 * worker's external shuffle service on): an application with two executors on one worker gets
 * its first from the standby (its local dir the standby's, renamed) and its second spawned afresh
 * in a sandbox of its own. Both write their map outputs to the one local dir of the application
 * on the host — one through the path the standby saw at its start, one through the host's — and a
 * shuffle across them gives the right answer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { sandboxStarted } from '../../backend/worker/process/prestart.js';
import { executorsRegistered, processMarker, startSharedCluster } from '../helpers/apps.js';
import { markedProcesses } from '../helpers/cli.js';
import { filesUnder } from '../helpers/localFiles.js';
import { waitFor } from '../helpers/processes.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const localRoot = mkdtempSync(join(tmpdir(), 'wick-test-confined-standby-'));
after(() => rmSync(localRoot, { recursive: true, force: true }));

test('the first executor is the confined standby, the second a fresh one; they share the local dir', {
  timeout: 180_000,
}, async (t) => {
  const cluster = await startSharedCluster({
    workers: 1,
    cores: 2,
    conf: {
      'wick.executor.sandbox': 'bwrap',
      'wick.local.dir': localRoot,
      'wick.shuffle.service.enabled': 'true',
      'wick.shuffle.service.port': '0',
    },
  });
  t.after(() => cluster.stop());
  const isNode = (p: { cmdline: string }) => basename(p.cmdline.split(' ')[0] ?? '') !== 'bwrap';
  // The standby's sandbox runs (not the worker's run that fills the code cache, which is
  // `executor-standby` too): it can take a launch.
  await waitFor(
    'a confined standby',
    () =>
      markedProcesses(cluster.mark).some(
        (p) =>
          !isNode(p) &&
          / executor-standby( |$)/.test(p.cmdline) &&
          p.cmdline.includes('/.prestart/') &&
          sandboxStarted(p.pid),
      ),
    t.signal,
  );
  const wc = await WickContext.create({
    master: cluster.url,
    appName: 'two confined executors',
    conf: { 'wick.executor.cores': '1', 'wick.executor.memory': '256m' },
  });
  t.after(() => wc.stop());
  await executorsRegistered(wc, 2);
  const appId = wc.appId;

  // Of its two executors' sandboxes, one's bwrap was started as the standby.
  const procs = markedProcesses(cluster.mark);
  const executors = procs.filter((p) => isNode(p) && p.cmdline.includes(`--app-id ${appId}`));
  assert.equal(executors.length, 2, procs.map((p) => p.cmdline.slice(0, 100)).join('\n'));
  const wasStandby = executors.map((e) =>
    procs.some(
      (p) =>
        !isNode(p) &&
        processMarker(p.pid) === processMarker(e.pid) &&
        / executor-standby /.test(p.cmdline),
    ),
  );
  assert.deepEqual(wasStandby.sort(), [false, true]);

  const words = Array.from({ length: 400 }, (_, i) => `w${i % 37}`);
  const counts = await wc
    .parallelize(words, 4)
    .map((w) => [w, 1] as [string, number])
    .reduceByKey((a, b) => a + b, 3)
    .collect();
  const expected = new Map<string, number>();
  for (const w of words) expected.set(w, (expected.get(w) ?? 0) + 1);
  assert.deepEqual(new Map(counts), expected);

  // One local dir for the application, named as every application's, holding both executors'
  // map outputs.
  const appDirs = readdirSync(localRoot).filter((d) => d.startsWith(`wick-executor-${appId}-`));
  assert.equal(appDirs.length, 1, readdirSync(localRoot).join(' '));
  const writers = new Set(
    filesUnder(join(localRoot, appDirs[0] as string), /^shuffle_\d+_\d+_0\.data$/).map(
      (f) => /blockmgr-(\d+)/.exec(f)?.[1],
    ),
  );
  assert.equal(writers.size, 2, `map outputs of both executors: ${[...writers]}`);
});
