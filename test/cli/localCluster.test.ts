/**
 * `wick local-cluster` as a user runs it: ready when every worker is registered, reachable by
 * `wick status`, `--conf` in every daemon, a busy port reported, and no process left after
 * Ctrl+C, SIGTERM, or even a SIGKILL of local-cluster itself (its daemons see stdin close).
 *
 * Every process a run starts is found by a marker in its environment, so "none left" covers the
 * master, which has nothing of the test on its command line.
 */

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, type TestContext, test } from 'node:test';
import {
  assertBuilt,
  killMarked,
  type MarkedProcess,
  markedProcesses,
  runWick,
  startWick,
  type WickProcess,
  waitUntilGone,
} from '../helpers/cli.js';
import { HeldPorts } from '../helpers/net.js';
import { assertSparkMasterJson } from '../helpers/sparkJson.js';
import { openLoginLink } from '../helpers/webUi.js';
import { skipWithoutZooKeeper, startZooKeeper } from '../helpers/zookeeper.js';

before(assertBuilt);

interface Cluster {
  lc: WickProcess;
  mark: string;
  workDir: string;
  url: string;
  /** local-cluster and its daemons, as found once it was ready. */
  processes: MarkedProcess[];
  log(name: string): string;
}

/** Starts `wick local-cluster` on free ports in a fresh work dir; cleans everything up after. */
async function startCluster(t: TestContext, extra: string[] = [], workers = 2): Promise<Cluster> {
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-lc-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
  });
  const lc = startWick(
    [
      'local-cluster',
      '--workers',
      String(workers),
      '--port',
      '0',
      '--webui-port',
      '0',
      '--work-dir',
      workDir,
      ...extra,
    ],
    { mark, cwd: workDir },
  );
  t.after(() => lc.child.stdin?.destroy());
  const url = await lc.firstLine().catch((err: Error) => {
    throw new Error(`${err.message}\n${daemonLogs(workDir)}`);
  });
  return {
    lc,
    mark,
    workDir,
    url,
    processes: markedProcesses(mark),
    log: (name) => readFileSync(join(workDir, 'logs', `${name}.out`), 'utf8'),
  };
}

/** Every daemon log of a run, for a failure message. */
function daemonLogs(workDir: string): string {
  const logs = join(workDir, 'logs');
  if (!existsSync(logs)) return '(no daemon logs)';
  return readdirSync(logs)
    .map((f) => `--- ${f}\n${readFileSync(join(logs, f), 'utf8')}`)
    .join('\n');
}

function daemonsOf(c: Cluster): { master: MarkedProcess[]; workers: MarkedProcess[] } {
  const ofCommand = (cmd: string) =>
    c.processes.filter((p) => p.pid !== c.lc.pid && p.cmdline.includes(` ${cmd} `));
  return { master: ofCommand('master'), workers: ofCommand('worker') };
}

/** Asserts that none of the processes the cluster started is alive, and no marked one either. */
function assertNoneLeft(c: Cluster): void {
  const alive = c.processes.filter((p) => markedProcesses(c.mark).some((m) => m.pid === p.pid));
  assert.deepEqual(alive, [], 'processes of the cluster left running');
  assert.deepEqual(markedProcesses(c.mark), [], 'marked processes left running');
}

test('local-cluster prints the master URL once both workers are registered, and stops everything on SIGINT', async (t) => {
  const c = await startCluster(t, [
    '--conf',
    'wick.worker.timeout=30s',
    '--conf',
    'wick.test.bogusKey=1',
  ]);
  assert.match(c.url, /^wick:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(c.lc.stdout(), `${c.url}\n`, 'stdout holds the URL and nothing else');

  // One local-cluster, one master, two workers; besides, at most a standby executor per worker.
  const { master, workers } = daemonsOf(c);
  assert.equal(master.length, 1, JSON.stringify(c.processes));
  assert.equal(workers.length, 2, JSON.stringify(c.processes));
  const standbys = c.processes.filter((p) => / executor-standby( |$)/.test(p.cmdline));
  assert.ok(standbys.length <= 2, JSON.stringify(c.processes));
  assert.equal(c.processes.length - standbys.length, 4, JSON.stringify(c.processes));

  // wick status --json: Spark's /json shape, both workers ALIVE.
  const s = await runWick(['status', '--master', c.url, '--json']);
  assert.equal(s.code, 0, s.stderr);
  const json = JSON.parse(s.stdout) as Record<string, unknown> & {
    workers: Record<string, unknown>[];
  };
  assertSparkMasterJson(json, 'status --json');
  assert.equal(json.url, c.url);
  assert.equal(json.status, 'ALIVE');
  assert.equal(json.aliveworkers, 2);
  assert.equal(json.cores, 2);
  assert.equal(json.coresused, 0);
  assert.equal(json.memory, 2048);
  assert.equal(json.memoryused, 0);
  assert.deepEqual(json.activeapps, []);
  assert.equal(json.workers.length, 2);
  for (const w of json.workers) {
    for (const key of [
      'id',
      'host',
      'port',
      'cores',
      'coresused',
      'memory',
      'memoryused',
      'state',
      'lastheartbeat',
    ]) {
      assert.ok(key in w, `worker entry has ${key}`);
    }
    assert.equal(w.state, 'ALIVE');
    assert.equal(w.host, '127.0.0.1');
    assert.equal(w.cores, 1);
    assert.equal(w.memory, 1024);
    assert.match(String(w.id), new RegExp(`^worker-\\d{14}-127\\.0\\.0\\.1-${w.port}$`));
  }

  // The same state for people.
  const h = await runWick(['status', '--master', c.url]);
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout, /Workers: 2 alive of 2/);

  // --conf reached every daemon: each one warns about the bogus key, none about the real one.
  for (const name of ['master', 'worker-1', 'worker-2']) {
    const log = c.log(name);
    assert.match(
      log,
      /WARN WickConf: Ignoring unknown configuration key wick\.test\.bogusKey \(from --conf\)/,
      `${name}.out:\n${log}`,
    );
    assert.doesNotMatch(log, /wick\.worker\.timeout/, `${name}.out:\n${log}`);
  }

  c.lc.child.kill('SIGINT');
  const exit = await c.lc.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, c.lc.stderr());
  assertNoneLeft(c);
});

test('local-cluster stops everything on SIGTERM', async (t) => {
  const c = await startCluster(t, [], 1);
  const { master, workers } = daemonsOf(c);
  assert.equal(master.length + workers.length, 2, JSON.stringify(c.processes));
  c.lc.child.kill('SIGTERM');
  const exit = await c.lc.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, c.lc.stderr());
  assert.match(c.lc.stderr(), /Received SIGTERM: stopping the local cluster/);
  assertNoneLeft(c);
  // Each daemon was told, and shut down by itself.
  assert.match(c.log('master'), /Received SIGTERM, shutting down/);
  assert.match(c.log('worker-1'), /Received SIGTERM, shutting down/);
});

test('if local-cluster is SIGKILLed, its daemons exit on their own when their stdin closes', async (t) => {
  const c = await startCluster(t);
  const { master, workers } = daemonsOf(c);
  const daemons = [...master, ...workers].map((p) => p.pid);
  assert.equal(daemons.length, 3, JSON.stringify(c.processes));
  c.lc.child.kill('SIGKILL');
  assert.deepEqual(await c.lc.exited, { code: null, signal: 'SIGKILL' });
  const left = await waitUntilGone(daemons);
  assert.deepEqual(left, [], `daemons still running after local-cluster died: ${left.join(', ')}`);
  assert.deepEqual(markedProcesses(c.mark), []);
  // They stopped, not crashed: nothing in their logs about an error.
  for (const name of ['master', 'worker-1', 'worker-2']) {
    assert.doesNotMatch(c.log(name), / ERROR /, `${name}.out:\n${c.log(name)}`);
  }
});

test('a busy master port is reported: the master moves to the next port', async (t) => {
  // Hold the port and the next ones, then free those: the master finds its port busy and the
  // next one free (other processes may take ephemeral ports at any time; this makes it likely).
  const held = await HeldPorts.acquire(4);
  t.after(() => held.releaseAll());
  for (let p = held.base + 1; p < held.base + 4; p++) await held.release(p);
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-lc-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
  });
  const lc = startWick(
    [
      'local-cluster',
      '--workers',
      '1',
      '--port',
      String(held.base),
      '--webui-port',
      '0',
      '--work-dir',
      workDir,
    ],
    { mark, cwd: workDir },
  );
  const url = await lc.firstLine().catch((err: Error) => {
    throw new Error(`${err.message}\n${daemonLogs(workDir)}`);
  });
  const port = Number(url.split(':').at(-1));
  assert.ok(port > held.base, `${url} is past the busy port ${held.base}`);
  const log = readFileSync(join(workDir, 'logs', 'master.out'), 'utf8');
  assert.ok(
    log.includes(
      `WARN Utils: Service 'wickMaster' could not bind on port ${held.base}. Attempting port ${held.base + 1}.`,
    ),
    log,
  );
  const pids = markedProcesses(mark).map((p) => p.pid);
  lc.child.kill('SIGTERM');
  assert.deepEqual(await lc.exited, { code: 0, signal: null }, lc.stderr());
  assert.deepEqual(await waitUntilGone(pids, 0), []);
  assert.deepEqual(markedProcesses(mark), []);
});

test('a busy master port with wick.port.maxRetries=0 fails start-up naming the port, leaving nothing', async (t) => {
  const held = await HeldPorts.acquire(1);
  t.after(() => held.releaseAll());
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-lc-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
  });
  const r = await runWick(
    [
      'local-cluster',
      '--workers',
      '1',
      '--port',
      String(held.base),
      '--webui-port',
      '0',
      '--work-dir',
      workDir,
      '--conf',
      'wick.port.maxRetries=0',
    ],
    { mark, cwd: workDir },
  );
  assert.notEqual(r.code, 0);
  assert.equal(r.stdout, '', 'no master URL printed');
  assert.match(r.stderr, /master exited during start-up/);
  assert.ok(r.stderr.includes(`ports ${held.base} to ${held.base} are all in use`), r.stderr);
  assert.ok(r.stderr.includes('wick.port.maxRetries=0'), r.stderr);
  assert.deepEqual(markedProcesses(mark), []);
});

test('local-cluster --workers 0 is refused with what is expected', async () => {
  const mark = randomUUID();
  const r = await runWick(['local-cluster', '--workers', '0', '--port', '0'], { mark });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--workers must be a whole number from 1 to 64, got "0"/);
  assert.deepEqual(markedProcesses(mark), []);
});

test('a bad worker value stops local-cluster with the worker’s message, and the master too', async (t) => {
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-lc-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
  });
  const r = await runWick(
    [
      'local-cluster',
      '--workers',
      '1',
      '--port',
      '0',
      '--webui-port',
      '0',
      '--memory',
      '12x',
    ].concat(['--work-dir', workDir]),
    { mark, cwd: workDir },
  );
  assert.notEqual(r.code, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /worker-1 exited during start-up/);
  assert.ok(r.stderr.includes('wick.worker.memory'), r.stderr);
  assert.ok(r.stderr.includes('"12x"'), r.stderr);
  assert.deepEqual(markedProcesses(mark), []);
});

test('local-cluster --masters 2 --zookeeper: one master ALIVE, one STANDBY, both in wick status; SIGTERM stops all', {
  timeout: 90_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  const zk = await startZooKeeper(t);
  const c = await startCluster(t, ['--masters', '2', '--zookeeper', zk.url]);
  const m = /^wick:\/\/(127\.0\.0\.1:\d+),(127\.0\.0\.1:\d+)$/.exec(c.url);
  assert.ok(m, c.url);
  assert.notEqual(m[1], m[2], 'masters on distinct ports');
  const { master, workers } = daemonsOf(c);
  assert.equal(master.length, 2, JSON.stringify(c.processes));
  assert.equal(workers.length, 2, JSON.stringify(c.processes));

  const s = await runWick(['status', '--master', c.url]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /^Masters: 2\n/);
  const states = [m[1], m[2]].map(
    (a) => new RegExp(`^  wick://${a}  (\\w+)$`, 'm').exec(s.stdout)?.[1],
  );
  assert.deepEqual([...states].sort(), ['ALIVE', 'STANDBY'], s.stdout);
  assert.match(s.stdout, /\(ALIVE\)/);
  assert.match(s.stdout, /Workers: 2 alive of 2/);

  c.lc.child.kill('SIGTERM');
  assert.equal((await c.lc.exited).code, 0, c.lc.stderr());
  await waitUntilGone(c.processes.map((p) => p.pid));
  assertNoneLeft(c);
});

test('with authentication on, local-cluster prints a login link for its web UI', {
  timeout: 60_000,
}, async (t) => {
  const secret = 'local-cluster-test-secret-1';
  const c = await startCluster(t, ['--conf', `wick.authenticate.secret=${secret}`], 1);
  // The line comes on stderr right after the URL on stdout.
  const ready = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m =
        /web UI (http:\/\/\S+\/login\?token=\S+) \(a login link, valid once for 5 minutes/.exec(
          c.lc.stderr(),
        );
      if (m) resolve(m[1] as string);
    };
    c.lc.child.stderr?.on('data', look);
    c.lc.child.once('exit', () => reject(new Error(`local-cluster exited:\n${c.lc.stderr()}`)));
    look();
  });
  const cookie = await openLoginLink(ready);
  const json = await fetch(new URL('/json', ready), { headers: { cookie } });
  assert.equal(json.status, 200);
  assert.equal(((await json.json()) as { url: string }).url, c.url);
  c.lc.child.kill('SIGTERM');
  assert.equal((await c.lc.exited).code, 0, c.lc.stderr());
  await waitUntilGone(c.processes.map((p) => p.pid));
  assertNoneLeft(c);
});
