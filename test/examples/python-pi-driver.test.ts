/**
 * Whom examples/python/pi_driver.py lets in, and what it believes, against a real master and
 * real RpcEnvs in their own processes (test/fixtures/rpc-peer.ts) playing its executors, as
 * Spark's MasterSuite plays workers with a MockWorker. The cluster has no workers, so the only
 * executors are the peers, and the test decides what each says: the driver must let in only
 * connections that prove its application's key, send the task over the connection its executor
 * registered on, and count a StatusUpdate only from the executor the task was launched on.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { deriveKey } from '../../backend/rpc/credentials.js';
import { repoRoot } from '../helpers/cli.js';
import { Daemon, startMaster } from '../helpers/cluster.js';
import { Peer } from '../helpers/peer.js';

const driverScript = join(repoRoot, 'examples', 'python', 'pi_driver.py');
const SECRET = 'the secret of the python driver test';
const SCHEDULER = 'CoarseGrainedScheduler';
/** A hang guard only: the test takes a few seconds. */
const TIMEOUT = { timeout: 120_000 };

/** pi_driver.py with WICK_AUTH_SECRET and nothing else of Wick's; killed when the test ends. */
function startDriver(t: TestContext, masterUrl: string, args: string[]): Daemon {
  const config = mkdtempSync(join(tmpdir(), 'wick-pydriver-config-'));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('WICK_')),
  );
  const child = spawn('python3', [driverScript, '--master', masterUrl, ...args], {
    env: { ...env, XDG_CONFIG_HOME: config, WICK_AUTH_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const driver = new Daemon(child, 'pi_driver.py');
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    driver.stdout += s;
  });
  t.after(async () => {
    await driver.kill();
    rmSync(config, { recursive: true, force: true });
  });
  return driver;
}

function registerExecutor(peer: Peer, driver: string, executorId: string, executor: string) {
  return peer.ask(driver, SCHEDULER, {
    type: 'RegisterExecutor',
    executorId,
    executor: { address: executor, name: 'Echo' },
    hostname: '127.0.0.1',
    cores: 1,
    logUrls: {},
  });
}

function finished(executorId: string, result: number) {
  return { type: 'StatusUpdate', executorId, taskId: 0, state: 'FINISHED', result };
}

test(
  "the Python driver lets in only its application's executors, and believes each about its own tasks only",
  TIMEOUT,
  async (t) => {
    const master = await startMaster(t, { conf: { 'wick.authenticate.secret': SECRET } });
    // One task of 1000 darts: the job ends with the first FINISHED the driver counts.
    const driver = startDriver(t, master.url, ['--slices', '1', '--samples-per-slice', '1000']);
    const [, address] = await driver.waitForStderr(/Listening on (\S+) \(authentication on/);
    const [, appId] = await driver.waitForStderr(/Connected to Wick cluster with app ID (app-\S+)/);
    const at = address as string;
    const id = appId as string;
    const appKey = `app:${id}:${deriveKey(SECRET, 'app', id)}`;

    // At the door: the cluster secret, another application's key, this one's under another secret.
    const withSecret = await Peer.start(t, {
      name: 'cluster',
      clientMode: true,
      conf: { 'wick.authenticate.secret': SECRET },
    });
    const refused = await withSecret.verify(at, SCHEDULER);
    assert.equal(refused.code, -32005);
    assert.match(refused.error ?? '', /This RpcEnv does not accept cluster keys/);
    const other = `app-other:${deriveKey(SECRET, 'app', 'app-other')}`;
    const otherApp = await Peer.start(t, {
      name: 'otherApp',
      clientMode: true,
      credential: `app:${other}`,
    });
    assert.match(
      (await otherApp.verify(at, SCHEDULER)).error ?? '',
      /This RpcEnv does not accept app:app-other keys/,
    );
    const forged = await Peer.start(t, {
      name: 'forged',
      clientMode: true,
      credential: `app:${id}:${deriveKey('another cluster, another secret', 'app', id)}`,
    });
    assert.match((await forged.verify(at, SCHEDULER)).error ?? '', /failed authentication/);
    await driver.waitForStderr(
      new RegExp(
        `Refused client-forged-\\S+ \\(.*\\): it hung up during authentication; its app:${id} key`,
      ),
    );

    // Executor 1 listens, but its task comes over the connection it registered on.
    const one = await Peer.start(t, { name: 'one', host: '127.0.0.1', credential: appKey });
    const config = await one.ask(at, SCHEDULER, { type: 'RetrieveAppConfig' });
    assert.equal(config.reply?.appId, id, JSON.stringify(config));
    assert.equal(
      (await registerExecutor(one, at, '1', one.address)).reply?.type,
      'RegisteredExecutor',
    );
    await one.waitForLog(t, 'Echo', (e) =>
      e.includes(`onError:Unsupported message LaunchTask from ${at}`),
    );

    // Executor 2 claims task 0, which runs on executor 1; a third peer speaks as executor 1.
    const two = await Peer.start(t, { name: 'two', clientMode: true, credential: appKey });
    assert.equal(
      (await registerExecutor(two, at, '2', 'client-two-x')).reply?.type,
      'RegisteredExecutor',
    );
    await two.send(at, SCHEDULER, finished('2', 1000));
    const three = await Peer.start(t, { name: 'three', clientMode: true, credential: appKey });
    await three.send(at, SCHEDULER, finished('1', 1000));
    await driver.waitForStderr(
      /Refused StatusUpdate of task 0 from client-two-\S+ \(app:\S+, inbound\): task 0 was launched on executor 1, not 2/,
    );
    await driver.waitForStderr(
      /Refused StatusUpdate of task 0 from client-three-\S+ \(app:\S+, inbound\): only executor 1 may send it, over the connection it registered on/,
    );

    // Executor 1's own report ends the job: 785 of 1000 darts inside, not the 1000 claimed above.
    await one.send(at, SCHEDULER, finished('1', 785));
    for (const executor of [one, two]) {
      await executor.waitForLog(t, 'Echo', (e) =>
        e.includes(`onError:Unsupported message StopExecutor from ${at}`),
      );
      await executor.stop();
    }
    assert.equal(await driver.exited, 0, driver.stderr);
    assert.equal(driver.stdout, 'Pi is roughly 3.14\n');
    assert.match(driver.stderr, new RegExp(`Stopped application ${id}`));
  },
);
