/**
 * Cluster-mode drivers across a master's failure, with real daemons: the files `wick submit`
 * left with the masters (the app's code tree, its --files) must outlive the master that took
 * them. With FILESYSTEM recovery they survive a SIGKILL and restart beside the state that names
 * them; with ZooKeeper, the standby that takes over has its own copy (the submit uploaded to
 * both). Either way a supervised driver whose worker dies is relaunched on the other worker,
 * which has never seen the app and fetches it from the (new) master. Also: a submission naming a
 * manifest the master lacks, and one whose files exceed wick.master.upload.maxSize, are refused
 * with messages that say what to do.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
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
import { type TestContext, test } from 'node:test';
import { RequestSubmitDriver } from '../../backend/protocol/client.js';
import { isDriverFinished } from '../../backend/protocol/common.js';
import { type MarkedProcess, markedProcesses, runWick, waitUntilGone } from '../helpers/cli.js';
import { Daemon, startMaster, startWorker, type WorkerProcess } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appIn,
  connectClient,
  driverIn,
  type MasterClient,
  type MasterState,
  workerIn,
} from '../helpers/masterMocks.js';
import { waitFor } from '../helpers/processes.js';
import { skipWithoutZooKeeper, startZooKeeper } from '../helpers/zookeeper.js';

checkNothingLeftRunning();

/** The app: its own TypeScript module, and a file shipped with --files that its tasks read. */
const APP: Record<string, string> = {
  'app.ts': `
import { readFileSync } from 'node:fs';
import { WickContext, WickFiles } from 'wick';
import { scale } from './lib/scale';

const wc = await WickContext.create({ appName: 'recovered' });
const rows = await wc
  .parallelize([1, 2, 3], 3)
  .map((x: number) => \`\${scale(x)}:\${readFileSync(WickFiles.get('words.txt'), 'utf8').trim()}\`)
  .collect();
console.log(\`ANSWER \${rows.join(' ')}\`);
// Stays up (a long-running driver) until it is killed.
if (process.argv[2] === 'linger') await new Promise((r) => setTimeout(r, 600_000));
await wc.stop();
`,
  'lib/scale.ts': `
const FACTOR: number = 10;
export function scale(x: number): number {
  return x * FACTOR + 7;
}
`,
  'words.txt': 'hello\n',
};

const ANSWER = 'ANSWER 17:hello 27:hello 37:hello';

/** A temp folder removed when the test ends (after the daemons, whose hook comes first). */
function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every daemon stops before the folders and ZooKeeper go: call first (hooks run in order). */
function stopDaemonsFirst(t: TestContext): void {
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
}

/** Writes APP into a temp folder; the paths of the main file and the file to ship. */
function writeApp(t: TestContext): { main: string; words: string } {
  const dir = tempDir(t, 'wick-test-apps-');
  for (const [path, source] of Object.entries(APP)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return { main: join(dir, 'app.ts'), words: join(dir, 'words.txt') };
}

type MarkedWorker = WorkerProcess & { mark: string };

/**
 * A worker with 3 cores (the driver, its executor, and the old app's until it is gone), whose
 * children carry a mark of their own, so that the test can tell what this worker left running.
 */
async function startMarkedWorker(
  t: TestContext,
  masterUrl: string,
  label: string,
): Promise<MarkedWorker> {
  const mark = randomUUID();
  const w = await startWorker(t, masterUrl, {
    cores: 3,
    memory: '1g',
    env: { WICK_TEST_MARK: mark },
    label,
  });
  return Object.assign(w, { mark });
}

/** The processes a worker started (drivers, executors), its standby executor aside. */
function childrenOf(worker: MarkedWorker): MarkedProcess[] {
  return markedProcesses(worker.mark).filter(
    (p) => p.pid !== worker.pid && !/ executor-standby( |$)/.test(p.cmdline),
  );
}

function submitArgs(masterUrl: string, app: { main: string; words: string }): string[] {
  return [
    'submit',
    '--master',
    masterUrl,
    '--deploy-mode',
    'cluster',
    '--supervise',
    '--total-executor-cores',
    '1',
    '--executor-cores',
    '1',
    '--executor-memory',
    '128m',
    '--driver-memory',
    '128m',
    '--files',
    app.words,
    app.main,
    'linger',
  ];
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** What the driver wrote on `worker` (its folder there is named by the driver's id). */
function driverOut(worker: WorkerProcess, driverId: string, stream: 'stdout' | 'stderr'): string {
  return readOr(join(worker.workDir, driverId, stream));
}

/**
 * Waits for the driver to print its answer on `worker`, and returns the id of the application it
 * ran; fails at once, with what the driver said, should the driver end first (a fetch that
 * failed ends it ERROR).
 */
async function answerOn(
  t: TestContext,
  client: MasterClient,
  worker: WorkerProcess,
  driverId: string,
): Promise<string | undefined> {
  const said = () =>
    `its stdout:\n${driverOut(worker, driverId, 'stdout')}\nstderr:\n${driverOut(worker, driverId, 'stderr').slice(-4000)}\n${worker.label}'s stderr:\n${worker.stderr.slice(-2000)}`;
  const stop = new AbortController();
  const ended = client
    .waitFor((s) => {
      const d = driverIn(s, driverId);
      return stop.signal.aborted || (d !== undefined && isDriverFinished(d.state));
    })
    .then((s) => {
      const d = driverIn(s, driverId);
      if (stop.signal.aborted) return;
      throw new Error(
        `${driverId} ended ${d?.state} (${d?.exception ?? 'no exception'}) before it printed its answer on ${worker.label}; ${said()}`,
      );
    });
  const answered = waitFor(
    `${driverId}'s answer on ${worker.label}`,
    () => driverOut(worker, driverId, 'stdout').includes(ANSWER),
    t.signal,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; ${said()}`);
  });
  try {
    await Promise.race([answered, ended]);
  } finally {
    stop.abort();
  }
  return /Connected to Wick cluster with app ID (app-\S+)/.exec(
    driverOut(worker, driverId, 'stderr'),
  )?.[1];
}

/**
 * The driver RUNNING on a worker (other than `not`): that worker's id. Fails at once, with the
 * driver's exception, should it end instead.
 */
async function placed(client: MasterClient, driverId: string, not?: string): Promise<string> {
  const s = await client.waitFor((s) => {
    const d = driverIn(s, driverId);
    if (d && isDriverFinished(d.state)) return true;
    return d?.state === 'RUNNING' && d.workerId !== undefined && d.workerId !== not;
  });
  const d = driverIn(s, driverId);
  if (d && isDriverFinished(d.state)) {
    throw new Error(
      `${driverId} ended ${d.state} (${d.exception ?? 'no exception'}) instead of running`,
    );
  }
  return d?.workerId as string;
}

/** The driver that relaunched `driverId` under a new id (SPARK-19900), once there is one. */
async function relaunchOf(client: MasterClient, driverId: string): Promise<string> {
  const s = await client.waitFor((s) => s.activeDrivers.some((d) => d.relaunchedFrom === driverId));
  return s.activeDrivers.find((d) => d.relaunchedFrom === driverId)?.id as string;
}

/** The manifests in a master's files dir (JSON with the code tree and the shipped files). */
function manifestsIn(filesDir: string): { sha256: string; files: string[] }[] {
  if (!existsSync(filesDir)) return [];
  const out: { sha256: string; files: string[] }[] = [];
  for (const name of readdirSync(filesDir)) {
    if (!/^[0-9a-f]{64}$/.test(name)) continue;
    try {
      const m = JSON.parse(readFileSync(join(filesDir, name), 'utf8')) as {
        code?: { files?: { sha256: string }[] };
        files?: { sha256: string }[];
      };
      if (!Array.isArray(m.code?.files) || !Array.isArray(m.files)) continue;
      out.push({ sha256: name, files: [...m.code.files, ...m.files].map((f) => f.sha256) });
    } catch {
      // Not JSON: a file of the app.
    }
  }
  return out;
}

function bothWorkersAlive(s: MasterState, workers: WorkerProcess[]): boolean {
  return workers.every((w) => workerIn(s, w.workerId)?.state === 'ALIVE');
}

/** A master that took over: ALIVE, with both workers, the driver and its application RUNNING. */
function recoveredAll(
  s: MasterState,
  workers: WorkerProcess[],
  driverId: string,
  appId: string,
): boolean {
  return (
    s.status === 'ALIVE' &&
    bothWorkersAlive(s, workers) &&
    driverIn(s, driverId)?.state === 'RUNNING' &&
    appIn(s, appId)?.state === 'RUNNING'
  );
}

test('FILESYSTEM recovery: a restarted master relaunches a supervised cluster-mode driver from the files it kept, and removes them once it is killed', {
  timeout: 240_000,
}, async (t) => {
  stopDaemonsFirst(t);
  const dir = tempDir(t, 'wick-test-recovery-');
  // A long worker timeout: the restarted master can only be ALIVE because the workers answered,
  // and a worker is dropped only because its connection went.
  const conf = {
    'wick.deploy.recoveryMode': 'FILESYSTEM',
    'wick.deploy.recoveryDirectory': dir,
    'wick.worker.timeout': '60s',
  };
  const filesDir = join(dir, 'files');
  const app = writeApp(t);
  const first = await startMaster(t, { conf, label: 'master (first)' });
  const workers = [
    await startMarkedWorker(t, first.url, 'worker A'),
    await startMarkedWorker(t, first.url, 'worker B'),
  ];
  const client1 = await connectClient(t, first.url);
  await client1.waitFor((s) => bothWorkersAlive(s, workers));

  const submit = await runWick(submitArgs(first.url, app));
  assert.equal(submit.code, 0, submit.stderr);
  const driverId = /^(driver-\S+)$/m.exec(submit.stdout)?.[1] as string;
  assert.ok(driverId, `no driver id in the submit's stdout:\n${submit.stdout}`);
  assert.match(
    submit.stderr,
    new RegExp(`Uploading \\d+ of the application's \\d+ files .* to master ${first.address}`),
  );
  const [manifest] = manifestsIn(filesDir);
  assert.ok(manifest, `no manifest in ${filesDir}: ${readdirSync(filesDir)}`);
  const record = JSON.parse(readFileSync(join(dir, `driver_${driverId}`), 'utf8'));
  assert.equal(
    record.desc.shipped.sha256,
    manifest.sha256,
    'the persisted driver names the manifest',
  );

  const firstWorkerId = await placed(client1, driverId);
  const firstIdx = workers.findIndex((w) => w.workerId === firstWorkerId);
  const [runsIt, other] = [workers[firstIdx], workers[1 - firstIdx]] as [
    MarkedWorker,
    MarkedWorker,
  ];
  const appId = await answerOn(t, client1, runsIt, driverId);
  assert.ok(appId, `no app id in ${driverId}'s stderr`);

  // The master dies and comes back on the same port and recovery dir.
  await first.kill('SIGKILL');
  const second = await startMaster(t, { port: first.port, conf, label: 'master (restarted)' });
  await second.waitForStderr(/I have been elected leader! New state: RECOVERING/);
  const client2 = await connectClient(t, second.url);
  const recovered = await client2.waitFor((s) => recoveredAll(s, workers, driverId, appId));
  assert.equal(
    driverIn(recovered, driverId)?.workerId,
    runsIt.workerId,
    'the recovered driver is still on its worker',
  );
  await second.waitForStderr(/Recovery complete - resuming operations!/);
  assert.ok(
    manifest.files.every((sha) => existsSync(join(filesDir, sha))),
    'the uploaded files survived the restart',
  );

  // The driver's worker dies: its driver and executors go with it...
  await runsIt.kill('SIGKILL');
  // Everything it started goes, its standby executor process too.
  const left = await waitUntilGone(markedProcesses(runsIt.mark).map((p) => p.pid));
  assert.deepEqual(left, [], `processes of ${runsIt.label} left after it was SIGKILLed`);
  // ...and the recovered master relaunches it on the other, under a new id, which fetches it
  // from the master.
  const relaunched = await relaunchOf(client2, driverId);
  assert.notEqual(relaunched, driverId);
  assert.equal(await placed(client2, relaunched, runsIt.workerId), other.workerId);
  const secondAppId = await answerOn(t, client2, other, relaunched);
  assert.notEqual(secondAppId, appId, 'the relaunched driver runs a new application');
  await second.waitForStderr(new RegExp(`Re-launching driver ${driverId} as ${relaunched}`));
  // The records follow: the new one names the old, whose record is gone.
  assert.equal(
    JSON.parse(readFileSync(join(dir, `driver_${relaunched}`), 'utf8')).relaunchedFrom,
    driverId,
  );
  assert.ok(!existsSync(join(dir, `driver_${driverId}`)), 'the old record is removed');
  assert.equal(driverIn(await client2.state(), driverId)?.state, 'RELAUNCHING');

  // Killed, it ends KILLED; the files only it named go. They are kept 10 minutes after their
  // upload in case a submit is about to name them: age them past that first.
  const old = new Date(Date.now() - 20 * 60_000);
  for (const name of readdirSync(filesDir)) utimesSync(join(filesDir, name), old, old);
  // The id the submit printed kills the submission's latest run.
  const kill = await runWick(['kill', driverId, '--master', second.url]);
  assert.equal(kill.code, 0, kill.stderr);
  const s = await client2.waitFor((s) => driverIn(s, relaunched)?.state === 'KILLED');
  assert.deepEqual(s.activeDrivers, [], 'a killed supervised driver is not relaunched');
  await waitFor(
    `the files of ${driverId} removed from ${filesDir}`,
    () => [manifest.sha256, ...manifest.files].every((sha) => !existsSync(join(filesDir, sha))),
    t.signal,
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}; left: ${readdirSync(filesDir)}\n${second.stderr.slice(-2000)}`,
    );
  });
  // The files may be gone before the master's line about it is through its stderr pipe.
  await second.waitForStderr(/Removed \d+ files no driver needs any more/);
  const survivors = await waitUntilGone(childrenOf(other).map((p) => p.pid));
  assert.deepEqual(survivors, [], `processes of the killed driver left on ${other.label}`);
});

test('ZooKeeper failover: the new leader, which never launched the driver, relaunches it from its own copy of the files', {
  timeout: 240_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  stopDaemonsFirst(t);
  const zk = await startZooKeeper(t);
  const app = writeApp(t);
  const filesDirs = [tempDir(t, 'wick-test-files-'), tempDir(t, 'wick-test-files-')];
  const haConf = (filesDir: string) => ({
    'wick.deploy.recoveryMode': 'ZOOKEEPER',
    'wick.deploy.zookeeper.url': zk.url,
    'wick.deploy.zookeeper.dir': '/wick-cluster-mode',
    'wick.deploy.zookeeper.sessionTimeout': '2s',
    // Long: the new leader can only be ALIVE because the workers and the application answered.
    'wick.worker.timeout': '60s',
    'wick.master.filesDir': filesDir,
  });
  const first = await startMaster(t, { conf: haConf(filesDirs[0] as string), label: 'leader' });
  await first.waitForStderr(/I have been elected leader! New state: ALIVE/);
  const second = await startMaster(t, { conf: haConf(filesDirs[1] as string), label: 'standby' });
  const masters = `wick://${first.address},${second.address}`;
  const workers = [
    await startMarkedWorker(t, masters, 'worker A'),
    await startMarkedWorker(t, masters, 'worker B'),
  ];
  const client1 = await connectClient(t, first.url);
  await client1.waitFor((s) => bothWorkersAlive(s, workers));
  const client2 = await connectClient(t, second.url);
  assert.equal((await client2.state()).status, 'STANDBY');

  const submit = await runWick(submitArgs(masters, app));
  assert.equal(submit.code, 0, submit.stderr);
  const driverId = /^(driver-\S+)$/m.exec(submit.stdout)?.[1] as string;
  assert.ok(driverId, `no driver id in the submit's stdout:\n${submit.stdout}`);
  for (const m of [first, second]) {
    assert.match(
      submit.stderr,
      new RegExp(`Uploading \\d+ of the application's \\d+ files .* to master ${m.address}`),
      `the submit uploads to ${m.label} too`,
    );
  }
  const [m1, m2] = filesDirs.map((d) => manifestsIn(d));
  assert.equal(m1?.length, 1, `one manifest in the leader's ${filesDirs[0]}`);
  assert.deepEqual(m2, m1, 'the standby has the same manifest as the leader');
  const manifest = m1?.[0] as { sha256: string; files: string[] };
  assert.ok(
    manifest.files.every((sha) => existsSync(join(filesDirs[1] as string, sha))),
    'the standby has every file the manifest names',
  );

  const firstWorkerId = await placed(client1, driverId);
  const runsIt = workers.find((w) => w.workerId === firstWorkerId) as MarkedWorker;
  const other = workers.find((w) => w !== runsIt) as MarkedWorker;
  const appId = await answerOn(t, client1, runsIt, driverId);
  assert.ok(appId, `no app id in ${driverId}'s stderr`);

  // The leader dies: the standby takes over with the workers, the driver and its application.
  await first.kill('SIGKILL');
  await second.waitForStderr(/I have been elected leader! New state: RECOVERING/);
  const recovered = await client2.waitFor((s) => recoveredAll(s, workers, driverId, appId));
  assert.equal(driverIn(recovered, driverId)?.workerId, runsIt.workerId);
  assert.doesNotMatch(second.stderr, /Launching driver/, 'the new leader never launched it yet');

  // The driver's worker dies: the new leader relaunches the driver on the other worker, which
  // can only fetch the app from the new leader (the old one is gone).
  await runsIt.kill('SIGKILL');
  // Everything it started goes, its standby executor process too.
  const left = await waitUntilGone(markedProcesses(runsIt.mark).map((p) => p.pid));
  assert.deepEqual(left, [], `processes of ${runsIt.label} left after it was SIGKILLed`);
  const relaunched = await relaunchOf(client2, driverId);
  assert.equal(await placed(client2, relaunched, runsIt.workerId), other.workerId);
  await second.waitForStderr(
    new RegExp(`Launching driver ${relaunched} on worker ${other.workerId}`),
  );
  const secondAppId = await answerOn(t, client2, other, relaunched);
  assert.notEqual(secondAppId, appId, 'the relaunched driver runs a new application');

  const kill = await runWick(['kill', driverId, '--master', masters]);
  assert.equal(kill.code, 0, kill.stderr);
  await client2.waitFor((s) => driverIn(s, relaunched)?.state === 'KILLED');
  const survivors = await waitUntilGone(childrenOf(other).map((p) => p.pid));
  assert.deepEqual(survivors, [], `processes of the killed driver left on ${other.label}`);
});

test('refused submissions: a manifest the master lacks says to upload first; files over wick.master.upload.maxSize fail the submit', {
  timeout: 120_000,
}, async (t) => {
  stopDaemonsFirst(t);
  const filesDir = tempDir(t, 'wick-test-files-');
  const master = await startMaster(t, {
    conf: { 'wick.master.upload.maxSize': '64k', 'wick.master.filesDir': filesDir },
  });
  const client = await connectClient(t, master.url);
  const unknown = 'ab'.repeat(32);
  const refused = await client.master.ask(
    RequestSubmitDriver({
      driverDescription: {
        appPath: 'app.js',
        shipped: { sha256: unknown, size: 100 },
        mem: 64,
        cores: 1,
        supervise: false,
        command: { argv: ['{{WICK_NODE}}'], env: {} },
      },
    }),
  );
  assert.equal(refused.success, false, 'a submission naming a manifest the master lacks');
  assert.equal(
    refused.message,
    `This master does not have the application's files (manifest ${unknown}): upload them first (wick submit does), to every master`,
  );
  assert.deepEqual((await client.state()).activeDrivers, [], 'no driver was added');

  const app = writeApp(t);
  // Under the limit, the app and its small file are taken...
  const small = await runWick([
    'submit',
    '--master',
    master.url,
    '--deploy-mode',
    'cluster',
    '--files',
    app.words,
    app.main,
  ]);
  assert.equal(small.code, 0, small.stderr);
  const smallId = small.stdout.trim();
  assert.match(smallId, /^driver-/);
  const killed = await runWick(['kill', smallId, '--master', master.url]);
  assert.equal(killed.code, 0, killed.stderr);
  await client.waitFor((s) => driverIn(s, smallId)?.state === 'KILLED');

  // ...but not with a file that takes them over it.
  const big = join(app.main, '..', 'big.bin');
  writeFileSync(big, Buffer.alloc(100 * 1024, 1));
  const before = readdirSync(filesDir).sort();
  const r = await runWick([
    'submit',
    '--master',
    master.url,
    '--deploy-mode',
    'cluster',
    '--files',
    big,
    app.main,
  ]);
  assert.equal(r.code, 1, `exit code of a submit over the limit:\n${r.stderr}`);
  const m =
    /^wick: The application's files are (\d+) bytes, more than this master keeps for one submission \(wick\.master\.upload\.maxSize = 65536 bytes\): raise it on the masters/m.exec(
      r.stderr,
    );
  assert.ok(m, `no wick.master.upload.maxSize message in:\n${r.stderr}`);
  assert.ok(Number(m[1]) > 100 * 1024, `the total counts the big file: ${m[0]}`);
  assert.equal(r.stdout, '', 'no driver id printed');
  assert.deepEqual(readdirSync(filesDir).sort(), before, 'nothing of the refused upload is kept');
  const s = await client.state();
  assert.deepEqual(
    s.activeDrivers.map((d) => d.id),
    [],
    'the refused submission added no driver',
  );
});
