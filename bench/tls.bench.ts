/**
 * Benchmark `tls`: what TLS 1.3 (wick.ssl.*) costs, against the same thing in plaintext, in the
 * same run. Wick keeps loopback plain by default; here wick.ssl.loopback=true puts loopback under
 * the rules of every other address, so that both sides run on this machine:
 *
 *   - rpc: asks per second with 64 in flight, and sequential ask latency, from this process to an
 *     Echo server process (bench/rpc/wick-server.ts), one plain and one TLS;
 *   - tasks: no-op tasks per second (`range(0, N, 1, N).foreach`), a driver in this process on a
 *     local cluster of 2 workers × 1 core, one cluster plain and one TLS (daemons, driver,
 *     executors and their shuffle servers);
 *   - shuffle: a job whose map tasks write SHUFFLE bytes (256 MiB; records of 64 KiB) and whose
 *     reduce tasks fetch them all (from the other executor, or its worker), timed whole, on the
 *     same two clusters.
 *
 * Rounds alternate which side goes first; figures are medians over rounds. Goal: every ratio
 * (TLS ÷ plain, as rates) ≥ 0.8. Writes bench/results/tls.json.
 *
 *   npm run bench -- tls [--rounds 3] [--asks 50000] [--tasks 5000] [--shuffle-mib 256]
 */
import { parseArgs } from 'node:util';
import type { WickContext } from '../backend/app/index.js';
import { WickConf } from '../backend/conf/WickConf.js';
import { wickProtocol } from '../backend/protocol/index.js';
import { Ping } from '../backend/protocol/rpc.js';
import { RpcEnv } from '../backend/rpc/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import type { Goal } from './lib/goals.js';
import { startServer, stopAll } from './lib/process.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { elapsedUs, median, percentile, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';
import { connect, startCluster } from './lib/wickApp.js';

const GOAL = 0.8;
/** Issue 28's goals: rpc, tasks and a shuffle's fetch over TLS within 0.8 of plain, same run. */
const goals: Goal[] = [
  { figure: 'ratios.asksPerSecond', op: '>=', value: GOAL, what: 'rpc asks/s, TLS ÷ plain' },
  { figure: 'ratios.tasksPerSecond', op: '>=', value: GOAL, what: 'tasks/s, TLS ÷ plain' },
  {
    figure: 'ratios.shuffleMiBPerSecond',
    op: '>=',
    value: GOAL,
    what: 'shuffle MiB/s, TLS ÷ plain',
  },
];
const WATCHDOG_MS = 15 * 60_000;
const TLS_CONF = { 'wick.ssl.loopback': 'true' };

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: sized('3', '1') },
    asks: { type: 'string', default: sized('50000', '500') },
    tasks: { type: 'string', default: sized('5000', '50') },
    'shuffle-mib': { type: 'string', default: sized('256', '4') },
  },
  strict: true,
});
const rounds = int('rounds', opts.rounds, 1, 50);
const asks = int('asks', opts.asks, 10, 10_000_000);
const tasks = int('tasks', opts.tasks, 2, 1_000_000);
const shuffleMiB = int('shuffle-mib', opts['shuffle-mib'], 1, 4096);

type Side = 'plain' | 'tls';
const SIDES: Side[] = ['plain', 'tls'];
const order = (r: number): Side[] => (r % 2 === 0 ? SIDES : [...SIDES].reverse());

async function askRate(ask: (seq: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < asks) await ask(next++);
    }),
  );
  return asks / (elapsedUs(t0, process.hrtime.bigint()) / 1e6);
}

async function askLatencyP50(ask: (seq: number) => Promise<unknown>): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < Math.min(asks, 2000); i++) {
    const t0 = process.hrtime.bigint();
    await ask(i);
    out.push(elapsedUs(t0, process.hrtime.bigint()));
  }
  return percentile(
    out.sort((a, b) => a - b),
    50,
  );
}

async function taskRate(wc: WickContext): Promise<number> {
  const t0 = process.hrtime.bigint();
  await wc.range(0, tasks, 1, tasks).foreach(() => {});
  return tasks / (elapsedUs(t0, process.hrtime.bigint()) / 1e6);
}

/** MiB per second of a job that shuffles `shuffleMiB`: 4 map tasks, 4 reduce tasks. */
async function shuffleRate(wc: WickContext): Promise<number> {
  const records = (shuffleMiB * 1024) / 64;
  const t0 = process.hrtime.bigint();
  const n = await wc
    .range(0, records, 1, 4)
    .map((i: number) => [i % 64, 'x'.repeat(65_536)] as [number, string])
    .partitionBy(4)
    .count();
  if (n !== records) throw new Error(`the shuffle job counted ${n} records, not ${records}`);
  return shuffleMiB / (elapsedUs(t0, process.hrtime.bigint()) / 1e6);
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  const env = { WICK_LOG_LEVEL: 'WARN' };
  // Everything starts at once: four server processes and two clusters.
  const [plainServer, tlsServer, plainCluster, tlsCluster] = await Promise.all([
    startServer<{ address: string }>('bench/rpc/wick-server.ts', { env }),
    startServer<{ address: string }>('bench/rpc/wick-server.ts', {
      env: { ...env, WICK_SSL_LOOPBACK: 'true' },
    }),
    startCluster({ workers: 2, cores: 1 }),
    startCluster({
      workers: 2,
      cores: 1,
      conf: Object.entries(TLS_CONF).map(([k, v]) => `${k}=${v}`),
    }),
  ]);
  const servers = { plain: plainServer, tls: tlsServer };
  const clusters = { plain: plainCluster, tls: tlsCluster };
  const clients = {
    plain: await RpcEnv.create({ protocol: wickProtocol, name: 'benchPlain', clientMode: true }),
    tls: await RpcEnv.create({
      protocol: wickProtocol,
      name: 'benchTls',
      clientMode: true,
      conf: new WickConf(TLS_CONF),
    }),
  };
  const contexts: Partial<Record<Side, WickContext>> = {};
  try {
    const ask: Record<Side, (seq: number) => Promise<unknown>> = {
      plain: await refAsk(clients.plain, servers.plain.ready.address),
      tls: await refAsk(clients.tls, servers.tls.ready.address),
    };
    [contexts.plain, contexts.tls] = await Promise.all([
      connect(clusters.plain.ready.url, 'bench-tls-plain', 2),
      connect(clusters.tls.ready.url, 'bench-tls', 2, TLS_CONF),
    ]);
    console.log(
      `tls: ${rounds} rounds of ${fmt(asks)} asks, ${fmt(tasks)} tasks and a ${shuffleMiB} MiB shuffle, plain and TLS 1.3 alternating`,
    );
    // Warm-up, both sides alike.
    for (const s of SIDES) {
      await askRate(ask[s]);
      await taskRate(contexts[s] as WickContext);
    }
    const samples: Record<string, Record<Side, number[]>> = {};
    const add = (k: string, s: Side, v: number) => {
      samples[k] ??= { plain: [], tls: [] };
      samples[k][s].push(v);
    };
    for (let r = 0; r < rounds; r++) {
      for (const s of order(r)) add('asksPerSecond', s, await askRate(ask[s]));
      for (const s of order(r)) add('askLatencyP50Us', s, await askLatencyP50(ask[s]));
      for (const s of order(r))
        add('tasksPerSecond', s, await taskRate(contexts[s] as WickContext));
      for (const s of order(r))
        add('shuffleMiBPerSecond', s, await shuffleRate(contexts[s] as WickContext));
      console.log(`  round ${r + 1}/${rounds} done`);
    }
    const med = (k: string, s: Side) => round(median((samples[k] as Record<Side, number[]>)[s]), 1);
    const keys = Object.keys(samples);
    const figures = Object.fromEntries(keys.map((k) => [k, med(k, 'tls')]));
    const baseline = Object.fromEntries(keys.map((k) => [k, med(k, 'plain')]));
    // As rates (higher is better): latency's ratio is plain ÷ TLS.
    const ratio = (k: string) =>
      round(
        k === 'askLatencyP50Us'
          ? (baseline[k] as number) / (figures[k] as number)
          : (figures[k] as number) / (baseline[k] as number),
        3,
      );
    const ratios = Object.fromEntries(keys.map((k) => [k, ratio(k)]));
    const file = writeResults('tls', { goals, figures, baseline, ratios });
    printTable(
      `tls — median of ${rounds} rounds`,
      ['', 'TLS 1.3', 'plain', 'ratio (as a rate)', `goal ≥ ${GOAL}`],
      keys.map((k) => [
        k,
        fmt(figures[k] as number, 1),
        fmt(baseline[k] as number, 1),
        (ratios[k] as number).toFixed(3),
        (ratios[k] as number) >= GOAL ? 'met' : 'MISSED',
      ]),
    );
    console.log(`\nWrote ${file}`);
  } finally {
    await Promise.all(Object.values(contexts).map((wc) => wc?.stop()));
    await Promise.all([clients.plain.stop(), clients.tls.stop()]);
    await stopAll();
  }
}

async function refAsk(env: RpcEnv, address: string): Promise<(seq: number) => Promise<unknown>> {
  const ref = await env.setupEndpointRef(address, 'Echo');
  return (seq) => ref.ask(Ping({ seq }));
}

runBenchmark('tls', main, WATCHDOG_MS);
