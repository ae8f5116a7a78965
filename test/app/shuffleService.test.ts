/**
 * The workers' external shuffle service (wick.shuffle.service.enabled) on a real local cluster: a
 * WickContext in this test process, a real master and 2 workers × 1 core, each serving its
 * executors' map outputs. An executor SIGKILLed between the map and reduce stages costs no map
 * stage (test/app/shuffle.test.ts shows the resubmit without the service); hostile fetches are
 * refused with clear errors and the worker lives on; no shuffle file is left once the
 * application ends; a lost worker takes its outputs with it (resubmit, right answer).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import {
  FetchShuffleBlock,
  MAX_SHUFFLE_CHUNK,
  type MapStatus,
  SHUFFLE_ENDPOINT,
} from '../../backend/protocol/shuffle.js';
import { deriveKey } from '../../backend/rpc/credentials.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import {
  eventually,
  executorsRegistered,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { waitUntilGone } from '../helpers/cli.js';
import { filesUnder } from '../helpers/localFiles.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const localRoot = mkdtempSync(join(tmpdir(), 'wick-test-ess-local-'));
let cluster: SharedCluster;
let wc: WickContext;
const logLines: string[] = [];

async function context(name: string): Promise<WickContext> {
  const c = await WickContext.create({ master: cluster.url, appName: name });
  await executorsRegistered(c, 2);
  return c;
}

before(async () => {
  cluster = await startSharedCluster({
    conf: {
      'wick.local.dir': localRoot,
      'wick.shuffle.service.enabled': 'true',
      // Two workers on one host: each picks a free port (7337 would be one worker's alone).
      'wick.shuffle.service.port': '0',
    },
  });
  wc = await context('shuffle service under test');
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logLines.push(String(chunk));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(localRoot, { recursive: true, force: true });
});

/** Map output files (data and index) under the workers' local dirs. */
const shuffleFiles = () => filesUnder(localRoot, /^shuffle_\d+_\d+_0\.(data|index)$/);

function mapStatuses(c: WickContext): MapStatus[] {
  const tracker = c.dagScheduler.mapOutputs as unknown as {
    shuffles: Map<number, (MapStatus | undefined)[]>;
  };
  return [...tracker.shuffles.values()].flat().filter((s): s is MapStatus => s !== undefined);
}

function wordCount(c: WickContext) {
  return c
    .range(0, 20_000, 1, 4)
    .map((x): [string, number] => [`k${x % 101}`, 1])
    .reduceByKey((a, b) => a + b, 3);
}

function assertCounts(result: [string, number][]): void {
  assert.equal(result.length, 101);
  for (const [, n] of result) assert.ok(n === 198 || n === 199, `count ${n}`);
  assert.equal(
    result.reduce((a, p) => a + p[1], 0),
    20_000,
  );
}

test('an executor SIGKILLed between the map and reduce stages: its worker serves its outputs, no map stage reruns', {
  timeout: 120_000,
}, async () => {
  const stats = wc.dagScheduler.stats;
  const reduced = wordCount(wc);
  assert.equal(await reduced.count(), 101);
  const statuses = mapStatuses(wc);
  assert.ok(
    statuses.every((s) => s.shuffleService === true),
    `every output served by a worker's shuffle service: ${JSON.stringify(statuses.map((s) => s.location))}`,
  );
  const victimId = statuses[0]?.executorId as string;
  const victim = cluster
    .others()
    .find((p) => p.cmdline.includes(`--executor-id ${victimId} `) && p.cmdline.includes(wc.appId));
  assert.ok(victim, `executor ${victimId}'s process`);
  const before = { ...stats };
  const linesBefore = logLines.length;
  process.kill(victim.pid, 'SIGKILL');
  await waitUntilGone([victim.pid]);
  // The driver has seen it go before the reduce stage is offered anywhere.
  await eventually(AbortSignal.timeout(30_000), () =>
    (wc as unknown as { driver: { executors: Map<string, unknown> } }).driver.executors.has(
      victimId,
    )
      ? undefined
      : true,
  );
  // Its files outlive it: they go when the application ends, not when an executor exits.
  assert.ok(
    shuffleFiles().some((f) => f.includes(`blockmgr-${victimId}/`)),
    `executor ${victimId}'s map output files are still there`,
  );
  assertCounts(await reduced.collect());
  assert.equal(stats.stagesResubmitted, before.stagesResubmitted, 'no stage resubmitted');
  assert.equal(stats.mapStagesRun, before.mapStagesRun, 'no map stage ran again');
  const after = logLines.slice(linesBefore).join('');
  assert.doesNotMatch(after, /Resubmitting ShuffleMapStage|FetchFailed|Lost \d+ map output/);
});

test("hostile fetches from a worker's shuffle service are refused with clear errors, and it serves on", {
  timeout: 60_000,
}, async () => {
  assert.equal(await wordCount(wc).count(), 101);
  const s = mapStatuses(wc).find((m) => (m.sizes[0] ?? 0) > 0) as MapStatus;
  assert.ok(s?.shuffleService, 'a map output served by a shuffle service');
  const tracker = wc.dagScheduler.mapOutputs as unknown as {
    shuffles: Map<number, (MapStatus | undefined)[]>;
  };
  const [shuffleId, outs] = [...tracker.shuffles.entries()].find(([, o]) => o.includes(s)) as [
    number,
    MapStatus[],
  ];
  const mapId = outs.indexOf(s);
  const good = { shuffleId, mapId, reduceId: 0, executorId: s.executorId, offset: 0, length: 64 };

  // This process finds the cluster secret the way the daemons do; it derives app keys from it.
  const probe = await RpcEnv.create({ protocol: wickProtocol, name: 'probe', clientMode: true });
  const secret = probe.clusterSecret;
  await probe.stop();
  assert.ok(secret, 'the test cluster runs with a secret');
  const envs: RpcEnv[] = [];
  const as = async (credential: Parameters<typeof RpcEnv.create>[0]['auth']) => {
    const env = await RpcEnv.create({
      protocol: wickProtocol,
      name: 'fetcher',
      clientMode: true,
      auth: credential,
    });
    envs.push(env);
    return env.endpointRef({ address: s.location, name: SHUFFLE_ENDPOINT });
  };
  const appKey = (id: string) => ({
    credential: { kind: 'app' as const, id, key: deriveKey(secret, 'app', id) },
    keys: undefined,
  });
  const code = (c: number, text: RegExp) => (err: Error & { code?: number }) => {
    assert.equal(err.code, c, `${err.message}`);
    assert.match(err.message, text);
    return true;
  };
  try {
    const own = await as(appKey(wc.appId));
    const other = await as(appKey('app-20200101000000-9999'));
    const cluster = await as({ credential: { kind: 'cluster', key: secret }, keys: undefined });
    const nobody = await as({ credential: undefined, keys: undefined });

    // Another application's key opens the service, and its blocks only: it has none here.
    await assert.rejects(
      other.ask(FetchShuffleBlock(good)),
      code(
        RpcErrorCode.ShuffleBlockNotFound,
        /no map outputs of application app-20200101000000-9999/,
      ),
    );
    // Naming the victim application does not help: the connection decides.
    await assert.rejects(
      other.ask(FetchShuffleBlock({ ...good, appId: wc.appId })),
      code(RpcErrorCode.NotPermitted, /proved the key of app-20200101000000-9999/),
    );
    // Neither the cluster secret nor no key at all gets in.
    await assert.rejects(cluster.ask(FetchShuffleBlock(good)), /auth|key|secret/i);
    await assert.rejects(nobody.ask(FetchShuffleBlock(good)), /auth|key|secret/i);
    // With the application's own key: bogus ids and sizes.
    await assert.rejects(
      own.ask(FetchShuffleBlock({ ...good, executorId: '../../..' })),
      code(RpcErrorCode.ShuffleBlockNotFound, /executorId \(an integer.*got "\.\.\/\.\.\/\.\."/),
    );
    await assert.rejects(
      own.ask(FetchShuffleBlock({ ...good, executorId: undefined })),
      code(RpcErrorCode.ShuffleBlockNotFound, /needs the executorId/),
    );
    await assert.rejects(
      own.ask(FetchShuffleBlock({ ...good, mapId: 2 ** 31 - 1 })),
      code(RpcErrorCode.ShuffleBlockNotFound, /No block shuffle_\d+_2147483647_0 here/),
    );
    await assert.rejects(
      own.ask(FetchShuffleBlock({ ...good, reduceId: 2 ** 31 - 1 })),
      code(RpcErrorCode.ShuffleBlockNotFound, /No block/),
    );
    await assert.rejects(
      own.ask(FetchShuffleBlock({ ...good, length: MAX_SHUFFLE_CHUNK + 1 })),
      /length/,
    );
    await assert.rejects(own.ask(FetchShuffleBlock({ ...good, shuffleId: -1 })), /shuffleId/);
    const far = await own.ask(FetchShuffleBlock({ ...good, offset: Number.MAX_SAFE_INTEGER }));
    assert.equal(far.data, '', 'nothing past the end');

    // And it serves on: the real fetch, and a job.
    const chunk = await own.ask(FetchShuffleBlock(good));
    assert.equal(chunk.size, s.sizes[0]);
    assert.ok(chunk.data.length > 0);
  } finally {
    await Promise.all(envs.map((e) => e.stop()));
  }
  assert.equal(await wordCount(wc).count(), 101);
  await cluster.watch.waitFor((st) => st.workers.filter((w) => w.state === 'ALIVE').length === 2);
  for (const w of cluster.workers) process.kill(w.pid, 0);
});

test('no shuffle file is left once the application ends, though executors died holding outputs', {
  timeout: 60_000,
}, async () => {
  assert.ok(shuffleFiles().length > 0, 'the tests above wrote shuffle files');
  await wc.stop();
  await eventually(AbortSignal.timeout(30_000), () =>
    shuffleFiles().length === 0 ? true : undefined,
  );
});

test('a worker lost after the map stage takes its outputs: the map stage reruns, the answer is right', {
  timeout: 150_000,
}, async () => {
  wc = await context('shuffle service, worker lost');
  const stats = wc.dagScheduler.stats;
  const reduced = wordCount(wc);
  assert.equal(await reduced.count(), 101);
  // The worker of an executor that wrote an output: its parent process.
  const holder = mapStatuses(wc)[0]?.executorId as string;
  const exec = cluster
    .others()
    .find((p) => p.cmdline.includes(`--executor-id ${holder} `) && p.cmdline.includes(wc.appId));
  assert.ok(exec, `executor ${holder}'s process`);
  const ppid = Number(readFileSync(`/proc/${exec.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
  const victim = cluster.workers.find((w) => w.pid === ppid);
  assert.ok(victim, `the worker of executor ${holder} (pid ${ppid})`);
  const before = stats.stagesResubmitted;
  process.kill(victim.pid, 'SIGKILL');
  await waitUntilGone([victim.pid]);
  assertCounts(await reduced.collect());
  assert.ok(stats.stagesResubmitted > before, 'the map stage was resubmitted');
  assert.ok(
    logLines.some((l) =>
      /Resubmitting ShuffleMapStage \d+ \(shuffle \d+\): \d+ of 4 map outputs are missing/.test(l),
    ),
  );
});
