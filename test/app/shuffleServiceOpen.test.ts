/**
 * The workers' external shuffle service in a cluster that runs open (wick.authenticate=false):
 * no key says whose blocks a fetch wants, so reducers name their application, and WordCount
 * still survives an executor SIGKILLed between its stages without rerunning a map task.
 * test/app/shuffleService.test.ts has the rest, with authentication on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { eventually, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import { waitUntilGone } from '../helpers/cli.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const OPEN = { 'wick.authenticate': 'false' };
const localRoot = mkdtempSync(join(tmpdir(), 'wick-test-ess-open-'));
let cluster: SharedCluster;
let wc: WickContext;

const executors = (c: WickContext) =>
  (c as unknown as { driver: { executors: Map<string, unknown> } }).driver.executors;

before(async () => {
  cluster = await startSharedCluster({
    conf: {
      ...OPEN,
      'wick.local.dir': localRoot,
      'wick.shuffle.service.enabled': 'true',
      'wick.shuffle.service.port': '0',
    },
  });
  wc = await WickContext.create({ master: cluster.url, appName: 'open ess', conf: OPEN });
  await eventually(AbortSignal.timeout(60_000), () =>
    executors(wc).size === 2 ? true : undefined,
  );
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(localRoot, { recursive: true, force: true });
});

test('open cluster: an executor SIGKILLed between the stages costs no map stage', {
  timeout: 120_000,
}, async () => {
  const counts = wc
    .range(0, 20_000, 1, 4)
    .map((x): [string, number] => [`k${x % 101}`, 1])
    .reduceByKey((a, b) => a + b, 3);
  assert.equal(await counts.count(), 101);
  const blocks = wc.dagScheduler.mapOutputs.blocksFor(0, 0);
  const victimId = blocks[0]?.executorId as string;
  const victim = cluster
    .others()
    .find((p) => p.cmdline.includes(`--executor-id ${victimId} `) && p.cmdline.includes(wc.appId));
  assert.ok(victim, `executor ${victimId}'s process`);
  const stats = { ...wc.dagScheduler.stats };
  process.kill(victim.pid, 'SIGKILL');
  await waitUntilGone([victim.pid]);
  await eventually(AbortSignal.timeout(30_000), () =>
    executors(wc).has(victimId) ? undefined : true,
  );
  const result = await counts.collect();
  assert.equal(result.length, 101);
  assert.equal(
    result.reduce((a, [, n]) => a + n, 0),
    20_000,
  );
  assert.equal(wc.dagScheduler.stats.stagesResubmitted, stats.stagesResubmitted);
  assert.equal(wc.dagScheduler.stats.mapStagesRun, stats.mapStagesRun);
});
