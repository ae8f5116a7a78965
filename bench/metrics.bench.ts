/**
 * Benchmark `metrics`: what one Prometheus scrape of a master costs with many workers.
 *
 * A real Master with its web UI (bench/lib/masterServer.ts, as `wick master` runs it) in its own
 * process; N simulated workers (bench/lib/simWorkers.ts, each its own RpcEnv and connection)
 * register and heartbeat at 1 Hz. Once the web UI's mirror shows all N ALIVE, this process
 * scrapes /metrics/prometheus --scrapes times in a row, with the cluster secret as a scraper
 * sends it, and reports the round trip (p50, p95, max), the page's size, and the master's CPU
 * time per scrape (from /proc). Baseline, in the same run and the same way: GET /health, the
 * web UI's floor (HTTP and its middlewares, nothing read), and GET /json, Spark's master JSON
 * over the same state (the other page a monitor reads).
 *
 * The master's CPU per request includes what it spent on the heartbeats meanwhile (1,000 a second
 * at 1k workers): the /health row shows that share. Writes bench/results/metrics.json.
 * Goal: scrapeP50MsAt1k ≤ 50 ms.
 *
 *   npm run bench -- metrics [--workers 1000] [--processes 2] [--scrapes 50]
 */
import { parseArgs } from 'node:util';
import { wickProtocol } from '../backend/protocol/index.js';
import { RequestMasterState } from '../backend/protocol/state.js';
import { RpcEnv } from '../backend/rpc/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { benchClusterSecret } from './lib/auth.js';
import { Control } from './lib/control.js';
import type { Goal } from './lib/goals.js';
import { type ServerProcess, startServer } from './lib/process.js';
import { cpuSeconds, machineLoad } from './lib/procStat.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, percentile, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: sized('1000', '20') },
    processes: { type: 'string', default: sized('2', '1') },
    scrapes: { type: 'string', default: sized('50', '5') },
  },
});
const workers = int('workers', opts.workers, 1, 20_000);
const processes = int('processes', opts.processes, 1, 16);
const scrapes = int('scrapes', opts.scrapes, 1, 10_000);
const GOAL_SCRAPE_P50_MS = 50;
const goals: Goal[] = [
  {
    figure: 'figures.scrapeP50MsAt1k',
    op: '<=',
    value: GOAL_SCRAPE_P50_MS,
    what: 'scrape p50 at 1k workers (ms)',
    optional: 'the smoke run scrapes a master with fewer workers',
  },
];

interface Timing {
  ms: number[];
  bytes: number;
  cpuMsPerRequest: number;
}

/** `count` GETs of `url` one after another: their round trips and the master's CPU per request. */
async function time(url: string, pid: number, count: number): Promise<Timing> {
  const headers = { authorization: `Bearer ${benchClusterSecret()}` };
  // One first, unmeasured: connections and code warmed.
  await (await fetch(url, { headers })).arrayBuffer();
  const ms: number[] = [];
  let bytes = 0;
  const c0 = cpuSeconds(pid);
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.arrayBuffer();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    bytes = body.byteLength;
  }
  const cpuMsPerRequest = ((cpuSeconds(pid) - c0) * 1000) / count;
  return { ms: ms.sort((a, b) => a - b), bytes, cpuMsPerRequest };
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  console.log(
    `metrics: one scrape of a master with ${fmt(workers)} simulated workers (${processes} processes), ${scrapes} scrapes (${machineLoad()})`,
  );
  const env = { WICK_LOG_LEVEL: 'WARN' };
  const master = await startServer<{ address: string; pid: number; webUiPort: number }>(
    'bench/lib/masterServer.ts',
    { env },
  );
  const sims: ServerProcess<unknown>[] = [];
  const controls: Control[] = [];
  const probeEnv = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'benchProbe',
    clientMode: true,
  });
  try {
    const base = Math.floor(workers / processes);
    for (let slot = 0; slot < processes; slot++) {
      const count = base + (slot < workers % processes ? 1 : 0);
      if (count === 0) continue;
      sims.push(
        await startServer<unknown>('bench/lib/simWorkers.ts', {
          args: [
            master.ready.address,
            String(count),
            String(slot),
            String(processes),
            String(workers),
          ],
          env,
        }),
      );
    }
    for (const [i, s] of sims.entries()) controls.push(new Control(s, `simWorkers ${i}`));
    await Promise.all(
      controls.map((c) => c.request({ cmd: 'register', concurrency: 32 }, 20 * 60_000)),
    );
    const startAt = Date.now() + 500;
    // probeEvery 0: heartbeats only, no probes.
    await Promise.all(controls.map((c) => c.request({ cmd: 'start', startAt, probeEvery: 0 })));
    const ref = await probeEnv.setupEndpointRef(master.ready.address, 'Master');
    const alive = (await ref.ask(RequestMasterState({}))).workers.filter(
      (w) => w.state === 'ALIVE',
    );
    if (alive.length !== workers) throw new Error(`${alive.length} workers ALIVE, not ${workers}`);

    const ui = `http://127.0.0.1:${master.ready.webUiPort}`;
    // The web UI's mirror follows the master by pushes: wait until it has every worker.
    const wanted = `metrics_master_aliveWorkers_Value{type="gauges"} ${workers}\n`;
    for (;;) {
      const text = await (
        await fetch(`${ui}/metrics/prometheus`, {
          headers: { authorization: `Bearer ${benchClusterSecret()}` },
        })
      ).text();
      if (text.includes(wanted)) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const scrape = await time(`${ui}/metrics/prometheus`, master.pid, scrapes);
    const health = await time(`${ui}/health`, master.pid, scrapes);
    const json = await time(`${ui}/json`, master.pid, scrapes);
    const row = (name: string, t: Timing) => [
      name,
      fmt(median(t.ms), 2),
      fmt(percentile(t.ms, 95), 2),
      fmt(t.ms[t.ms.length - 1] as number, 2),
      fmt(t.cpuMsPerRequest, 2),
      fmt(t.bytes),
    ];
    printTable(
      `GET on the master's web UI with ${fmt(workers)} workers ALIVE, ${scrapes} requests each, one at a time`,
      ['', 'p50 ms', 'p95 ms', 'max ms', 'master CPU ms/request', 'bytes'],
      [
        row('/metrics/prometheus', scrape),
        row('/health (floor)', health),
        row('/json (Spark JSON)', json),
      ],
    );
    const k = workers >= 1000 && workers % 1000 === 0 ? `${workers / 1000}k` : String(workers);
    const p50 = median(scrape.ms);
    const figures = {
      [`scrapeP50MsAt${k}`]: round(p50, 2),
      [`scrapeP95MsAt${k}`]: round(percentile(scrape.ms, 95), 2),
      [`scrapeCpuMsAt${k}`]: round(scrape.cpuMsPerRequest, 2),
      [`scrapeBytesAt${k}`]: scrape.bytes,
    };
    const baseline = {
      [`healthP50MsAt${k}`]: round(median(health.ms), 2),
      [`jsonP50MsAt${k}`]: round(median(json.ms), 2),
    };
    const ratios = {
      [`scrapeVsJsonAt${k}`]: round(p50 / median(json.ms), 3),
    };
    const file = writeResults('metrics', { goals, figures, baseline, ratios });
    const met = p50 <= GOAL_SCRAPE_P50_MS;
    console.log(
      `\ngoal: scrape p50 ${fmt(p50, 2)} ms ≤ ${GOAL_SCRAPE_P50_MS} ms: ${met ? 'met' : 'NOT met'}\nwrote ${file}`,
    );
  } finally {
    // Heartbeats stop before the master does, or each simulator logs a failed send per worker.
    await Promise.all(controls.map((c) => c.request({ cmd: 'halt' }).catch(() => {})));
    await probeEnv.stop();
    await master.stop();
    await Promise.all(sims.map((s) => s.stop()));
  }
}

await runBenchmark('metrics', main, 15 * 60_000);
