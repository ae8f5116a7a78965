/**
 * Benchmark `failover`: how long a cluster with standby masters (recovery mode ZOOKEEPER) is
 * without a leader when the leader dies. A real ZooKeeper (Debian's package, on loopback, as the
 * tests run it), two `wick master` daemons and N `wick worker` daemons, all real processes. Each
 * round SIGKILLs the leader and measures, from that moment, until the other master reports ALIVE
 * with every worker ALIVE again (re-registered after its MasterChanged), polling its state every
 * 20 ms; then the killed master is started again, a STANDBY for the next round.
 *
 * A SIGKILLed leader cannot close its ZooKeeper session: the standby learns of its death when the
 * session expires, so the session timeout is the floor, and the baseline. Goal: failoverSeconds ≤
 * the session timeout + 2 s. Writes bench/results/failover.json (failoverSeconds: median of the
 * rounds; failoverMaxSeconds: the slowest).
 *
 *   npm run bench -- failover [--rounds 5] [--workers 4] [--session-timeout 2]
 *
 * ZooKeeper's tick is set to a quarter of the session timeout (sessions may last 2 to 20 ticks, and
 * ZooKeeper checks for expired sessions every tick).
 */
import { parseArgs } from 'node:util';
import { wickProtocol } from '../backend/protocol/index.js';
import type { MessageOf } from '../backend/protocol/registry.js';
import { type MasterStateResponse, RequestMasterState } from '../backend/protocol/state.js';
import { RpcEnv } from '../backend/rpc/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { Daemon, type MasterProcess, startMaster, startWorker } from '../test/helpers/cluster.js';
import { startZooKeeper, type ZooKeeperServer } from '../test/helpers/zookeeper.js';
import { sized } from './lib/args.js';
import type { Goal } from './lib/goals.js';
import { writeResults } from './lib/results.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

const GOAL_MARGIN_SECONDS = 2;

/** Failover within the ZooKeeper session timeout + GOAL_MARGIN_SECONDS (baseline.goalSeconds). */
const goals: Goal[] = [
  {
    figure: 'ratios.failoverVsGoal',
    op: '<=',
    value: 1,
    what: 'failover ÷ (session timeout + 2 s)',
  },
];
const WATCHDOG_MS = 10 * 60_000;

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: sized('5', '1') },
    workers: { type: 'string', default: sized('4', '1') },
    'session-timeout': { type: 'string', default: '2' },
  },
  strict: true,
});

function positive(name: string, raw: string | undefined, max: number, int = true): number {
  const n = Number(raw);
  if (!(n > 0 && n <= max) || (int && !Number.isInteger(n))) {
    throw new Error(
      `--${name} must be a ${int ? 'whole ' : ''}number from 1 to ${max}, got "${raw}"`,
    );
  }
  return n;
}

const rounds = positive('rounds', opts.rounds, 50);
const workerCount = positive('workers', opts.workers, 32);
const sessionTimeoutSeconds = positive('session-timeout', opts['session-timeout'], 60, false);

type State = MessageOf<typeof MasterStateResponse>;

let zk: ZooKeeperServer | undefined;

async function stopAll(): Promise<void> {
  await Promise.all(Daemon.running().map((d) => d.stop()));
  await zk?.stop();
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  zk = await startZooKeeper(undefined, {
    tickTimeMs: Math.round((sessionTimeoutSeconds * 1000) / 4),
  });
  const conf = {
    'wick.deploy.recoveryMode': 'ZOOKEEPER',
    'wick.deploy.zookeeper.url': zk.url,
    'wick.deploy.zookeeper.sessionTimeout': `${sessionTimeoutSeconds}s`,
    // Long: recovery completes because every worker answered, not because it gave up on one.
    'wick.worker.timeout': '60s',
  };
  const masters: MasterProcess[] = [await startMaster(undefined, { conf })];
  await masters[0]?.waitForStderr(/New state: ALIVE/);
  masters.push(await startMaster(undefined, { conf }));
  const url = `wick://${masters.map((m) => m.address).join(',')}`;
  const workers = await Promise.all(
    Array.from({ length: workerCount }, () =>
      startWorker(undefined, url, { cores: 1, memory: '256m' }),
    ),
  );
  const ids = workers.map((w) => w.workerId);
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'benchClient',
    clientMode: true,
  });
  try {
    const stateOf = async (m: MasterProcess): Promise<State | undefined> => {
      try {
        const ref = await env.setupEndpointRef(m.address, 'Master');
        return await ref.ask(RequestMasterState({}), { timeout: 5_000 });
      } catch {
        return undefined;
      }
    };
    const ready = (s: State | undefined) =>
      s?.status === 'ALIVE' &&
      ids.every((id) => s.workers.find((w) => w.id === id)?.state === 'ALIVE');
    const until = async (m: MasterProcess, ok: (s: State | undefined) => boolean) => {
      for (;;) {
        if (ok(await stateOf(m))) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    let leader = 0;
    await until(masters[leader] as MasterProcess, ready);
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const dying = masters[leader] as MasterProcess;
      const next = masters[1 - leader] as MasterProcess;
      await until(next, (s) => s?.status === 'STANDBY');
      const start = performance.now();
      await dying.kill('SIGKILL');
      await until(next, ready);
      const seconds = (performance.now() - start) / 1000;
      times.push(seconds);
      console.log(`  round ${r + 1}/${rounds}: failover in ${seconds.toFixed(2)} s`);
      masters[leader] = await startMaster(undefined, { port: dying.port, conf });
      leader = 1 - leader;
    }

    const failoverSeconds = round(median(times), 3);
    const failoverMaxSeconds = round(Math.max(...times), 3);
    const goal = sessionTimeoutSeconds + GOAL_MARGIN_SECONDS;
    const ratios = {
      failoverVsSessionTimeout: round(failoverSeconds / sessionTimeoutSeconds, 3),
      failoverVsGoal: round(failoverSeconds / goal, 3),
    };
    const file = writeResults('failover', {
      goals,
      figures: { failoverSeconds, failoverMaxSeconds, workers: workerCount, rounds },
      baseline: { sessionTimeoutSeconds, goalSeconds: goal },
      ratios,
    });
    printTable(
      `failover — ${rounds} rounds, 2 masters, ${workerCount} workers, ZooKeeper session timeout ${sessionTimeoutSeconds} s`,
      ['', 'seconds'],
      [
        ['leader SIGKILLed → new leader ALIVE, all workers back (median)', fmt(failoverSeconds, 2)],
        ['same, slowest round', fmt(failoverMaxSeconds, 2)],
        ['ZooKeeper session timeout (baseline)', fmt(sessionTimeoutSeconds, 2)],
      ],
    );
    const ok = failoverSeconds <= goal;
    printTable(
      'Goals',
      ['figure', 'measured', 'goal', ''],
      [['failoverSeconds', fmt(failoverSeconds, 2), `≤ ${goal}`, ok ? 'met' : 'MISSED']],
    );
    console.log(`Wrote ${file}`);
  } finally {
    await env.stop();
  }
}

const watchdog = setTimeout(() => {
  console.error(`failover benchmark did not finish within ${WATCHDOG_MS / 1000} s; stopping`);
  void stopAll().finally(() => process.exit(1));
}, WATCHDOG_MS);
watchdog.unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(130));
  });
}
try {
  await main();
} finally {
  await stopAll();
  clearTimeout(watchdog);
}
