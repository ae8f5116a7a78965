/**
 * High availability on a real ZooKeeper (Debian's package, started by the test on loopback): two
 * masters with wick.deploy.recoveryMode=ZOOKEEPER, one ALIVE and one STANDBY. SIGKILLing the
 * leader while SparkPi runs makes the standby take over (RECOVERING → ALIVE) with every worker and
 * the application back, and the job ends with the right answer; the old leader, restarted, is a
 * STANDBY. Restarting ZooKeeper under a running cluster makes the leader step down, and a leader is
 * elected again, with the worker back, once ZooKeeper is.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { RequestSubmitDriver } from '../../backend/protocol/client.js';
import { AppDir, appIdIn, eventually, killWhenDone } from '../helpers/apps.js';
import { startWick } from '../helpers/cli.js';
import { Daemon, startMaster, startWorker, wick } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { appIn, connectClient, workerIn } from '../helpers/masterMocks.js';
import { skipWithoutZooKeeper, startZooKeeper } from '../helpers/zookeeper.js';

checkNothingLeftRunning();

function haConf(zkUrl: string, dir: string) {
  return {
    'wick.deploy.recoveryMode': 'ZOOKEEPER',
    'wick.deploy.zookeeper.url': zkUrl,
    'wick.deploy.zookeeper.dir': dir,
    'wick.deploy.zookeeper.sessionTimeout': '2s',
    // Long: a new leader can only become ALIVE because every worker and application answered.
    'wick.worker.timeout': '60s',
  };
}

/** Stops every daemon before ZooKeeper goes (after hooks run in the order they were added: call first). */
function stopDaemonsFirst(t: TestContext): void {
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
}

/** SparkPi whose tasks wait for `gate` to exist: the job is running until the test opens it. */
const gatedPi = (gate: string) => `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'HA Pi' });
const slices = 8;
const n = 100_000 * slices;
const count = await wc
  .range(1, n, 1, slices)
  .mapPartitions((it: Iterable<number>) => {
    const fs = process.getBuiltinModule('node:fs');
    while (!fs.existsSync(${JSON.stringify(gate)})) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
    let inside = 0;
    for (const _ of it) {
      const x = Math.random() * 2 - 1;
      const y = Math.random() * 2 - 1;
      if (x * x + y * y <= 1) inside++;
    }
    return [inside];
  })
  .reduce((a: number, b: number) => a + b);
console.log(\`Pi is roughly \${(4 * count) / (n - 1)}\`);
await wc.stop();
`;

test('SIGKILL the leader while SparkPi runs: the standby takes over, nothing is lost, the answer is right', {
  timeout: 120_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  stopDaemonsFirst(t);
  const zk = await startZooKeeper(t);
  const apps = new AppDir();
  t.after(() => apps.remove());
  const conf = haConf(zk.url, '/wick-ha-1');

  const first = await startMaster(t, { conf });
  await first.waitForStderr(/I have been elected leader! New state: ALIVE/);
  const second = await startMaster(t, { conf });
  const client2 = await connectClient(t, second.url);
  assert.equal((await client2.state()).status, 'STANDBY');
  const masters = `wick://${first.address},${second.address}`;

  const workers = await Promise.all([
    startWorker(t, masters, { cores: 2, memory: '1g' }),
    startWorker(t, masters, { cores: 2, memory: '1g' }),
  ]);
  const client1 = await connectClient(t, first.url);
  await client1.waitFor((s) => workers.every((w) => workerIn(s, w.workerId)?.state === 'ALIVE'));
  // The standby refused them (MasterInStandby): it knows no worker. It refuses submissions too.
  assert.deepEqual((await client2.state()).workers, []);
  const refused = await client2.master.ask(
    RequestSubmitDriver({
      driverDescription: {
        appPath: '/tmp/a.js',
        mem: 64,
        cores: 1,
        supervise: false,
        command: { argv: ['node'], env: {} },
      },
    }),
  );
  assert.equal(refused.success, false);
  assert.match(refused.message, /Current state is not alive: STANDBY/);

  const gate = join(apps.path, 'gate');
  const driver = startWick(['submit', '--master', masters, apps.write('pi.ts', gatedPi(gate))]);
  killWhenDone(t, driver);
  const appId = await eventually(t.signal, () => appIdIn(driver.stderr() + driver.stdout()));
  const before = await client1.waitFor((s) => {
    const a = appIn(s, appId);
    return a?.state === 'RUNNING' && a.executors.filter((e) => e.state === 'RUNNING').length === 2;
  });
  const executorIds = (s: typeof before) =>
    (appIn(s, appId)?.executors ?? []).map((e) => `${e.id}@${e.workerId} ${e.state}`).sort();
  const running = executorIds(before);

  await first.kill('SIGKILL');
  await second.waitForStderr(/I have been elected leader! New state: RECOVERING/);
  // Nothing lost: the same executors, on the same workers, RUNNING (not replaced by new ones).
  let last: typeof before | undefined;
  const s = await Promise.race([
    client2.waitFor((s) => {
      last = s;
      return (
        s.status === 'ALIVE' &&
        workers.every((w) => workerIn(s, w.workerId)?.state === 'ALIVE') &&
        appIn(s, appId)?.state === 'RUNNING' &&
        executorIds(s).join() === running.join()
      );
    }),
    new Promise<never>((_, reject) =>
      setTimeout(
        () =>
          reject(
            new Error(
              `after recovery: executors ${JSON.stringify(last && executorIds(last))}, before ${JSON.stringify(running)}, status ${last?.status}\nnew leader's log:\n${second.stderr.slice(-4000)}`,
            ),
          ),
        30_000,
      ).unref(),
    ),
  ]);
  await second.waitForStderr(/Recovery complete - resuming operations!/);
  for (const w of workers) {
    assert.match(second.stderr, new RegExp(`Worker has been re-registered: ${w.workerId}`));
  }
  assert.match(second.stderr, new RegExp(`Application has been re-registered: ${appId}`));
  assert.deepEqual(
    appIn(s, appId)
      ?.executors.map((e) => e.state)
      .sort(),
    ['RUNNING', 'RUNNING'],
  );

  // The tasks were waiting all along: let them finish, under the new leader.
  writeFileSync(gate, '');
  const { code } = await driver.exited;
  assert.equal(code, 0, driver.stderr());
  const m = /Pi is roughly (\d+\.\d+)/.exec(driver.stdout());
  assert.ok(m, `no "Pi is roughly" in:\n${driver.stdout()}\n${driver.stderr()}`);
  assert.ok(Math.abs(Number(m[1]) - Math.PI) < 0.05, m[0]);
  const done = await client2.waitFor((s) => appIn(s, appId)?.state === 'FINISHED');
  assert.ok(workers.every((w) => workerIn(done, w.workerId)?.state === 'ALIVE'));

  // The old leader comes back: a STANDBY, the new leader stays ALIVE.
  const again = await startMaster(t, { port: first.port, conf });
  const client3 = await connectClient(t, again.url);
  assert.equal((await client3.state()).status, 'STANDBY');
  assert.equal((await client2.state()).status, 'ALIVE');
  assert.doesNotMatch(again.stderr, /elected leader/);
  // wick status, given both, shows each master's state, then the leader's view of the cluster.
  const status = await wick(['status', '--master', `wick://${again.address},${second.address}`]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^  wick://${again.address}  STANDBY$`, 'm'));
  assert.match(status.stdout, new RegExp(`^  wick://${second.address}  ALIVE$`, 'm'));
  assert.match(status.stdout, new RegExp(`^Master wick://${second.address} \\(ALIVE\\)`, 'm'));
  assert.match(status.stdout, /Workers: 2 alive of 2/);
});

test('restarting ZooKeeper under a running cluster: the leader steps down, then a leader is back with the worker', {
  timeout: 120_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  stopDaemonsFirst(t);
  const zk = await startZooKeeper(t);
  const conf = haConf(zk.url, '/wick-ha-2');
  const first = await startMaster(t, { conf });
  await first.waitForStderr(/New state: ALIVE/);
  const second = await startMaster(t, { conf });
  const masters = `wick://${first.address},${second.address}`;
  const worker = await startWorker(t, masters, { cores: 1, memory: '512m' });
  const client1 = await connectClient(t, first.url);
  const client2 = await connectClient(t, second.url);
  await client1.waitFor((s) => workerIn(s, worker.workerId)?.state === 'ALIVE');

  await zk.kill();
  await first.waitForStderr(
    /Lost the connection to ZooKeeper at .*: stepping down to STANDBY until it is back/,
  );
  await client1.waitFor((s) => s.status === 'STANDBY');
  assert.equal((await client2.state()).status, 'STANDBY');

  await zk.restart();
  // One of the two leads again (the same one if its session survived) and has the worker back.
  let leader: typeof client1 | undefined;
  while (!leader) {
    for (const c of [client1, client2]) {
      const s = await c.state();
      if (s.status === 'ALIVE' && workerIn(s, worker.workerId)?.state === 'ALIVE') leader = c;
    }
    if (!leader) await new Promise((r) => setTimeout(r, 50));
  }
  const other = leader === client1 ? client2 : client1;
  assert.equal((await other.state()).status, 'STANDBY');
  assert.ok(worker.isRunning);
});

test('masters stop cleanly: a stopped leader hands over at once, and a master stops even with ZooKeeper gone', {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  stopDaemonsFirst(t);
  // A session timeout longer than the test: the standby can only lead because the leader closed
  // its session when it stopped.
  const zk = await startZooKeeper(t, { tickTimeMs: 5_000 });
  const conf = { ...haConf(zk.url, '/wick-ha-3'), 'wick.deploy.zookeeper.sessionTimeout': '90s' };
  const first = await startMaster(t, { conf });
  await first.waitForStderr(/New state: ALIVE/);
  const second = await startMaster(t, { conf });
  const client2 = await connectClient(t, second.url);
  assert.equal((await client2.state()).status, 'STANDBY');
  assert.equal(await first.stop(), 0, first.stderr);
  await second.waitForStderr(/I have been elected leader! New state: ALIVE/);

  await zk.kill();
  await second.waitForStderr(/Lost the connection to ZooKeeper/);
  assert.equal(await second.stop(), 0, second.stderr);
});

test('recovery mode ZOOKEEPER without wick.deploy.zookeeper.url stops start-up naming the key', async () => {
  const r = await wick([
    'master',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--webui-port',
    '0',
    '--conf',
    'wick.deploy.recoveryMode=ZOOKEEPER',
  ]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /wick\.deploy\.zookeeper\.url/);
});
