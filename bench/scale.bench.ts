/**
 * Benchmark `scale`: one real Master with up to 100,000 workers and 1,000 applications waiting,
 * measured at each size of --workers (the curve: 1k, 10k, 100k) against the least a master written
 * on bare node:net does for the same workers (bench/lib/rawMaster.ts), in the same run.
 *
 * The master runs alone in its process (bench/lib/masterServer.ts, as `wick master` runs it, with
 * authentication on). Simulated workers (bench/lib/scaleWorkers.ts, --processes of them) each
 * prove the cluster secret, register by their own RegisterWorker and heartbeat every
 * wick.worker.timeout / 4, as real workers do, spread evenly over the interval; they dial from
 * addresses across 127.0.0.0/8, so that ports never run short. The master knows a worker (and an
 * application) by its connection, so each holds one: the master holds a socket per worker and per
 * application, and a process may hold at most `ulimit -n` of them. Where that limit is below a
 * size asked for (20,000 here, and not raisable without CAP_SYS_RESOURCE), the benchmark measures
 * the most workers the limit allows instead, says so, and writes the limit beside the figures: a
 * floor of the machine, not of Wick. The applications ask for executors larger than any worker,
 * so they wait, and every registration makes the master schedule() them all, as it would.
 *
 * Per size, for Wick:
 *   - registerAllSeconds: from the first RegisterWorker sent to the last RegisteredWorker read;
 *   - masterRssMiB: the master's resident memory once all are registered (and per worker);
 *   - cpuUsPerHeartbeat: the master's CPU time (/proc) over a --window of heartbeats ÷ the
 *     heartbeats sent in it; the raw master's the same way: cpuPerHeartbeatVsFloor;
 *   - firstStateMs: a new client's whole state, page by page (RequestMasterState with a limit);
 *   - statusMs: `wick status` (the real CLI) from spawn to exit, and `node -e 0` beside it;
 *   - deadAfterTimeoutMs: one worker falls silent; how long after its last heartbeat + the timeout
 *     a subscriber is told it is DEAD.
 * And scheduleMs: one pure schedule() (backend/master/scheduling.ts) of 1,000 waiting apps over the
 * largest size's workers (bench/lib/naiveSchedule.ts's workload), median of --schedule-runs.
 *
 * Writes bench/results/scale.json; the figures without a size are the largest size's.
 *
 *   npm run bench -- scale [--workers 1000,10000,100000] [--processes 4]
 *                          [--apps 1000] [--timeout 60] [--window 30] [--skip-raw]
 */
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { schedule } from '../backend/master/scheduling.js';
import { MAX_STATE_PAGE_ENTRIES } from '../backend/protocol/bounds.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { benchClusterSecret, rawHandshake } from './lib/auth.js';
import { runCommand } from './lib/command.js';
import { Control } from './lib/control.js';
import type { Goal } from './lib/goals.js';
import { scheduleWorkload } from './lib/naiveSchedule.js';
import { type ServerProcess, startServer } from './lib/process.js';
import { cpuSeconds, machineLoad, openFilesLimit, rssMB } from './lib/procStat.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

/** The goals are for 100,000 workers (npm run bench -- scale); a smoke run measures 60. */
export const goals: Goal[] = [
  {
    figure: 'figures.registerAllSeconds',
    op: '<=',
    value: 60,
    what: 'every worker registered (s)',
  },
  { figure: 'figures.masterRssMiB', op: '<=', value: 2048, what: 'master RSS (MiB)' },
  { figure: 'figures.scheduleMs', op: '<=', value: 100, what: 'schedule() of 1,000 apps (ms)' },
  { figure: 'figures.firstStateMs', op: '<=', value: 2000, what: 'first full state, paged (ms)' },
  { figure: 'figures.statusMs', op: '<=', value: 1000, what: 'wick status (ms)' },
  {
    figure: 'figures.deadAfterTimeoutMs',
    op: '<=',
    value: 1000,
    what: 'a silent worker seen DEAD after timeout (ms)',
  },
  {
    figure: 'ratios.cpuPerHeartbeatVsFloor',
    op: '<=',
    value: 1.1,
    what: 'master CPU per heartbeat ÷ bare',
    optional: 'not measured with --skip-raw',
  },
];

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: sized('1000,10000,100000', '60') },
    processes: { type: 'string', default: sized('4', '2') },
    apps: { type: 'string', default: sized('1000', '10') },
    timeout: { type: 'string', default: sized('60', '2') },
    window: { type: 'string', default: sized('30', '2') },
    'schedule-runs': { type: 'string', default: sized('5', '1') },
    'skip-raw': { type: 'boolean', default: false },
  },
  strict: true,
});
const sizes = (opts.workers ?? '')
  .split(',')
  .map((s) => int('workers', s.trim(), 1, 100_000))
  .sort((a, b) => a - b);
const processes = int('processes', opts.processes, 1, 32);
/** Sockets a process needs beside its connections (stdio, epoll, the web UI, the loader…). */
const FD_MARGIN = 300;
const apps = int('apps', opts.apps, 0, 10_000);
const timeoutS = int('timeout', opts.timeout, 1, 3600);
const windowS = int('window', opts.window, 1, 600);
const scheduleRuns = int('schedule-runs', opts['schedule-runs'], 1, 50);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw client connection to a master: frames by hand, replies matched by id. */
class Client {
  private text = '';
  private nextId = 1;
  private readonly waiting = new Map<number, (f: Frame) => void>();
  onNotification: (f: Frame) => void = () => {};

  private constructor(
    readonly socket: net.Socket,
    readonly from: string,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.text += chunk.toString('utf8');
      for (let nl = this.text.indexOf('\n'); nl !== -1; nl = this.text.indexOf('\n')) {
        const f = JSON.parse(this.text.slice(0, nl)) as Frame;
        this.text = this.text.slice(nl + 1);
        const w = typeof f.id === 'number' ? this.waiting.get(f.id) : undefined;
        if (w) {
          this.waiting.delete(f.id as number);
          w(f);
        } else this.onNotification(f);
      }
    });
    socket.on('error', () => {});
  }

  static async connect(address: string, from: string): Promise<Client> {
    const colon = address.lastIndexOf(':');
    const socket = net.connect(Number(address.slice(colon + 1)), address.slice(0, colon));
    await new Promise((r) => socket.once('connect', r));
    await rawHandshake(socket, from, benchClusterSecret());
    return new Client(socket, from);
  }

  notify(message: { type: string }): void {
    this.socket.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: message.type, params: { to: 'Master', from: this.from, message } })}\n`,
    );
  }

  ask(message: { type: string }): Promise<Frame> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.socket.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method: message.type, params: { to: 'Master', from: this.from, message } })}\n`,
      );
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

interface Frame {
  id?: number;
  method?: string;
  result?: Record<string, unknown>;
  error?: { message: string };
  params?: { message?: Record<string, unknown> };
}

/**
 * `apps` applications whose executors fit no worker: they wait, and every schedule() sees them.
 * The master keeps one application per driver connection (its address), as it does one worker.
 */
async function registerWaitingApps(address: string): Promise<Client[]> {
  const clients: Client[] = [];
  let next = 0;
  const lane = async () => {
    while (next < apps) {
      const i = next++;
      const c = await Client.connect(address, `client-scale-app-${i}`);
      clients.push(c);
      const registered = new Promise<void>((resolve) => {
        c.onNotification = (f) => {
          if (f.method === 'RegisteredApplication') resolve();
        };
      });
      c.notify({
        type: 'RegisterApplication',
        appDescription: {
          name: `waiting-${i}`,
          user: 'bench',
          memoryPerExecutorMB: 64 * 1024,
          command: { argv: ['true'], env: {} },
        },
        driver: { address: c.from, name: 'AppClient' },
      } as { type: string });
      // The bound's timer is cleared once the app is in: a pending one kept the benchmark's
      // process alive for a minute after its work was done.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        registered,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`application ${i} was not registered within 60 s`)),
            60_000,
          );
        }),
      ]).finally(() => clearTimeout(timer));
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
  return clients;
}

/** Every page of the master's state, as a new client reads it; the workers it listed. */
async function readWholeState(address: string): Promise<{ ms: number; workers: number }> {
  const c = await Client.connect(address, 'client-scale-state');
  const t0 = performance.now();
  let workers = 0;
  let after: string | undefined;
  try {
    do {
      const f = await c.ask({
        type: 'RequestMasterState',
        limit: MAX_STATE_PAGE_ENTRIES,
        ...(after ? { after } : {}),
      } as { type: string });
      if (f.error) throw new Error(`RequestMasterState: ${f.error.message}`);
      workers += ((f.result?.workers ?? []) as unknown[]).length;
      after = f.result?.next as string | undefined;
    } while (after);
    return { ms: performance.now() - t0, workers };
  } finally {
    c.close();
  }
}

/** Subscribes, then waits until the master pushes `workerId` as DEAD; the wall-clock time then. */
async function subscribeForDeath(address: string, workerId: string) {
  const c = await Client.connect(address, 'client-scale-watch');
  let seenAt = 0;
  c.onNotification = (f) => {
    if (f.method !== 'MasterStateEvent' || seenAt) return;
    const ws = f.params?.message?.workers as { id: string; state: string }[] | undefined;
    if (ws?.some((w) => w.id === workerId && w.state === 'DEAD')) seenAt = Date.now();
  };
  const reply = await c.ask({
    type: 'SubscribeMasterState',
    subscriber: { address: c.from, name: 'Watcher' },
    limit: 1,
  } as { type: string });
  if (reply.error) throw new Error(`SubscribeMasterState: ${reply.error.message}`);
  return {
    seen: async (limitMs: number): Promise<number> => {
      const t0 = performance.now();
      while (!seenAt) {
        if (performance.now() - t0 > limitMs) throw new Error(`${workerId} never seen DEAD`);
        await sleep(5);
      }
      return seenAt;
    },
    close: () => c.close(),
  };
}

interface SizeFigures {
  registerAllSeconds: number;
  masterRssMiB: number;
  cpuUsPerHeartbeat: number;
  heartbeatsInWindow: number;
  simLatenessP99Ms: number;
  firstStateMs?: number;
  statusMs?: number;
  nodeMs?: number;
  deadAfterTimeoutMs?: number;
}

async function measure(n: number, kind: 'wick' | 'raw'): Promise<SizeFigures> {
  const master =
    kind === 'wick'
      ? await startServer<{ address: string; pid: number }>('bench/lib/masterServer.ts', {
          args: [`wick.worker.timeout=${timeoutS}s`],
          // A line per registration is the master's real cost, not 100,000 lines for the reader.
          env: { WICK_LOG_LEVEL: process.env.SCALE_DEBUG ? 'DEBUG' : 'WARN' },
          readyTimeoutMs: 60_000,
        })
      : await startServer<{ address: string; pid: number }>('bench/lib/rawMaster.ts');
  const address = master.ready.address;
  const began = performance.now();
  const sims: { server: ServerProcess<unknown>; control: Control }[] = [];
  const clients: Client[] = [];
  try {
    const step = (what: string) =>
      console.log(
        `  ${kind} ${fmt(n)}: ${what} (${((performance.now() - began) / 1000).toFixed(1)} s)`,
      );
    if (kind === 'wick' && apps > 0) {
      clients.push(...(await registerWaitingApps(address)));
      step(`${apps} applications waiting`);
    }
    const connections = n;
    // A simulator holds a socket per worker too: enough processes that each stays in its limit.
    const simProcesses = Math.max(processes, Math.ceil(n / (openFilesLimit() - FD_MARGIN)));
    const per = Math.ceil(connections / simProcesses);
    for (let p = 0; p * per < connections; p++) {
      const server = await startServer<unknown>('bench/lib/scaleWorkers.ts', { args: [address] });
      sims.push({ server, control: new Control(server, `scaleWorkers ${p}`) });
    }
    const t0 = performance.now();
    const registered = await Promise.all(
      sims.map(({ control }, p) =>
        control.request<{ workers: number }>(
          {
            cmd: 'register',
            firstConnection: p * per,
            connections: Math.min(per, connections - p * per),
            perConnection: 1,
          },
          30 * 60_000,
        ),
      ),
    );
    const registerAllSeconds = (performance.now() - t0) / 1000;
    const total = registered.reduce((s, r) => s + r.workers, 0);
    if (total !== n) {
      throw new Error(`${total} workers registered of ${n}`);
    }
    step(`${fmt(total)} workers registered`);
    const masterRssMiB = rssMB(master.pid);
    const intervalMs = (timeoutS * 1000) / 4;
    const startAt = Date.now() + 200;
    for (const s of sims) await s.control.request({ cmd: 'start', intervalMs, startAt });
    // One interval to warm up (every worker heartbeats once), then the window.
    await sleep(Math.min(intervalMs, 5000) + 200);
    for (const s of sims) await s.control.request({ cmd: 'stats' });
    step(`heartbeating; measuring ${windowS} s`);
    const c0 = cpuSeconds(master.pid);
    await sleep(windowS * 1000);
    const c1 = cpuSeconds(master.pid);
    const stats = await Promise.all(
      sims.map((s) => s.control.request<{ sent: number; latenessP99Ms: number }>({ cmd: 'stats' })),
    );
    const sent = stats.reduce((a, s) => a + s.sent, 0);
    const out: SizeFigures = {
      registerAllSeconds,
      masterRssMiB,
      cpuUsPerHeartbeat: ((c1 - c0) * 1e6) / Math.max(1, sent),
      heartbeatsInWindow: sent,
      simLatenessP99Ms: Math.max(...stats.map((s) => s.latenessP99Ms)),
    };
    if (kind === 'raw') return out;

    const state = await readWholeState(address);
    step('whole state read');
    if (state.workers !== total) throw new Error(`the state listed ${state.workers} of ${total}`);
    out.firstStateMs = state.ms;
    const url = `wick://${address}`;
    const status = await runCommand(
      process.execPath,
      [join(root, 'bin/wick.js'), 'status', '--master', url],
      { cwd: root, timeoutMs: 120_000 },
    );
    if (status.code !== 0) {
      throw new Error(`wick status exited ${status.code}: ${status.lines.at(-1)?.text ?? ''}`);
    }
    out.statusMs = status.ms;
    step('wick status answered');
    out.nodeMs = (await runCommand(process.execPath, ['-e', '0'], { cwd: root })).ms;

    // The first worker of the first connection falls silent.
    const firstId = await firstWorkerId(address);
    const watch = await subscribeForDeath(address, firstId);
    try {
      const { lastHeartbeatAt } = await (sims[0] as (typeof sims)[number]).control.request<{
        lastHeartbeatAt: number;
      }>({ cmd: 'silence', index: 0 });
      const seenAt = await watch.seen(3 * timeoutS * 1000 + 10_000);
      out.deadAfterTimeoutMs = seenAt - lastHeartbeatAt - timeoutS * 1000;
    } finally {
      watch.close();
    }
    return out;
  } finally {
    // Quiet first, then the master: the drivers and workers it would see go are not measured.
    for (const s of sims) await s.control.request({ cmd: 'halt' }).catch(() => {});
    await master.stop();
    for (const c of clients) c.close();
    for (const s of sims) await s.server.stop();
  }
}

/** The id the simulators gave worker 0 (connection 0's host, port 20000), as the master lists it. */
async function firstWorkerId(address: string): Promise<string> {
  const c = await Client.connect(address, 'client-scale-id');
  try {
    const f = await c.ask({ type: 'RequestMasterState', limit: MAX_STATE_PAGE_ENTRIES } as {
      type: string;
    });
    const ws = (f.result?.workers ?? []) as { id: string; host: string; port: number }[];
    const w = ws.find((x) => x.host === '127.0.1.1' && x.port === 20_000);
    if (!w) throw new Error('worker 0 (127.0.1.1:20000) is not on the first page');
    return w.id;
  } finally {
    c.close();
  }
}

function scheduleMs(workers: number): number {
  const w = scheduleWorkload(apps || 1, workers);
  const run = () =>
    schedule({
      drivers: [],
      apps: w.apps,
      workers: w.workers,
      spreadOut: true,
      random: Math.random,
    });
  for (let i = 0; i < 2; i++) run();
  const times: number[] = [];
  for (let i = 0; i < scheduleRuns; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  benchClusterSecret();
  // The master holds a socket per worker and per application: beyond its limit, the most it can.
  const ceiling = openFilesLimit() - FD_MARGIN - apps;
  const measured = [...new Set(sizes.map((n) => Math.min(n, ceiling)))];
  const asked = sizes[sizes.length - 1] as number;
  const largest = measured[measured.length - 1] as number;
  if (largest < asked) {
    console.log(
      `Note: ${fmt(asked)} workers need ${fmt(asked + apps + FD_MARGIN)} open files in the master; this machine allows ${fmt(openFilesLimit())} a process (ulimit -n, hard), so the largest size measured is ${fmt(largest)}: a limit of the machine, not of Wick (raise it with LimitNOFILE= in systemd, or ulimit -Hn as root with CAP_SYS_RESOURCE).`,
    );
  }
  console.log(
    `scale: ${sizes.map(fmt).join(', ')} workers (${processes}+ simulator processes), ${apps} waiting apps, timeout ${timeoutS} s, window ${windowS} s; ulimit -n ${openFilesLimit()} (${machineLoad()})`,
  );
  const rows: (string | number)[][] = [];
  const curve: Record<string, number> = {};
  let top: SizeFigures | undefined;
  let topRaw: SizeFigures | undefined;
  for (const n of measured) {
    const wick = await measure(n, 'wick');
    const raw = opts['skip-raw'] ? undefined : await measure(n, 'raw');
    const k = n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
    curve[`cpuUsPerHeartbeatAt${k}`] = round(wick.cpuUsPerHeartbeat, 2);
    curve[`rssKiBPerWorkerAt${k}`] = round((wick.masterRssMiB * 1024) / n, 2);
    curve[`registerAllSecondsAt${k}`] = round(wick.registerAllSeconds, 2);
    rows.push([
      fmt(n),
      fmt(wick.registerAllSeconds, 1),
      fmt(wick.masterRssMiB, 0),
      fmt((wick.masterRssMiB * 1024) / n, 1),
      fmt(wick.cpuUsPerHeartbeat, 1),
      raw ? fmt(raw.cpuUsPerHeartbeat, 1) : '—',
      raw ? (wick.cpuUsPerHeartbeat / raw.cpuUsPerHeartbeat).toFixed(2) : '—',
      fmt(wick.firstStateMs ?? 0, 0),
      fmt(wick.statusMs ?? 0, 0),
      fmt(wick.deadAfterTimeoutMs ?? 0, 0),
    ]);
    top = wick;
    topRaw = raw;
  }
  const sched = scheduleMs(largest);
  printTable(
    `one master, by workers (${machineLoad()})`,
    [
      'workers',
      'register all s',
      'RSS MiB',
      'KiB/worker',
      'µs CPU/heartbeat',
      'bare µs',
      '÷ bare',
      'state ms',
      'status ms',
      'dead +ms',
    ],
    rows,
  );
  console.log(`\nschedule() of ${apps} apps × ${fmt(largest)} workers: ${fmt(sched, 1)} ms`);
  if (!top) throw new Error('no size measured');
  const file = writeResults('scale', {
    goals,
    figures: {
      workers: largest,
      workersAsked: asked,
      registerAllSeconds: round(top.registerAllSeconds, 2),
      masterRssMiB: round(top.masterRssMiB, 1),
      scheduleMs: round(sched, 2),
      firstStateMs: round(top.firstStateMs ?? Number.NaN, 1),
      statusMs: round(top.statusMs ?? Number.NaN, 1),
      deadAfterTimeoutMs: round(top.deadAfterTimeoutMs ?? Number.NaN, 0),
      cpuUsPerHeartbeat: round(top.cpuUsPerHeartbeat, 2),
      heartbeatsInWindow: top.heartbeatsInWindow,
      simLatenessP99Ms: round(top.simLatenessP99Ms, 1),
      ...curve,
      apps,
      openFilesLimit: openFilesLimit(),
      timeoutSeconds: timeoutS,
    },
    baseline: {
      nodeStartMs: round(top.nodeMs ?? Number.NaN, 1),
      ...(topRaw ? { bareCpuUsPerHeartbeat: round(topRaw.cpuUsPerHeartbeat, 2) } : {}),
    },
    ratios: topRaw
      ? { cpuPerHeartbeatVsFloor: round(top.cpuUsPerHeartbeat / topRaw.cpuUsPerHeartbeat, 3) }
      : {},
  });
  console.log(`Wrote ${file}`);
}

await runBenchmark('scale', main, 60 * 60_000);
