/**
 * One process of simulated workers for the `master` benchmark. The master knows a worker by its
 * RpcEnv's address, so each simulated worker is its own listening RpcEnv on loopback (port 0) with
 * a "Worker" endpoint, and talks to the master over its own TCP connection exactly as a real worker
 * does: setupEndpointRef (the endpoint verifier), RegisterWorker, then a Heartbeat every second.
 * Like a real worker each proves the cluster secret when it dials: the one the benchmark put in
 * WICK_AUTH_SECRET for its processes (auth.ts), which RpcEnv finds by itself.
 *
 *   node --import tsx bench/lib/simWorkers.ts MASTER_ADDRESS COUNT SLOT SLOTS TOTAL
 *
 * Worker j of this process is worker j·SLOTS + SLOT of TOTAL in the whole simulation, and sends its
 * heartbeats at that fraction of each second: all processes together spread TOTAL heartbeats
 * evenly over the second. Commands on stdin (see control.ts):
 *
 *   register {concurrency}     create the envs, register every worker, wait for RegisteredWorker
 *   start {startAt, probeEvery} heartbeat from wall-clock time startAt (ms since the epoch); every
 *                              probeEvery-th worker also asks BoundPortsRequest right after each
 *                              heartbeat, on the same connection, and records the round trip
 *   stats {}                   what happened since the last stats (and resets it)
 *   halt {}                    stop heartbeating
 */
import { WickConf } from '../../backend/conf/WickConf.js';
import {
  BoundPortsRequest,
  Heartbeat,
  RegisteredWorker,
  RegisterWorker,
  RegisterWorkerFailed,
} from '../../backend/protocol/deploy.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import type { WireMessage } from '../../backend/protocol/registry.js';
import { RpcEndpoint, type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { setLogLevel } from '../../backend/util/log.js';
import { workerId } from '../../backend/worker/workerId.js';
import { type Command, serveCommands } from './control.js';
import { exitWithParent } from './process.js';
import { percentile } from './stats.js';

setLogLevel('WARN');

const [masterAddress, countArg, slotArg, slotsArg, totalArg] = process.argv.slice(2);
const count = Number(countArg);
const slot = Number(slotArg);
const slots = Number(slotsArg);
const total = Number(totalArg);
if (!masterAddress || ![count, slot, slots, total].every(Number.isInteger)) {
  throw new Error('usage: simWorkers.ts MASTER_ADDRESS COUNT SLOT SLOTS TOTAL');
}

class SimWorkerEndpoint extends RpcEndpoint {
  private settle: ((err?: Error) => void) | undefined;
  readonly registered = new Promise<void>((resolve, reject) => {
    this.settle = (err) => (err ? reject(err) : resolve());
  });

  constructor() {
    super();
    this.on(RegisteredWorker, () => this.settle?.());
    this.on(RegisterWorkerFailed, (msg) =>
      this.settle?.(new Error(`registration refused: ${msg.message}`)),
    );
    // Nothing else is expected: no application runs in this benchmark.
  }
}

interface Sim {
  env: RpcEnv;
  master: RpcEndpointRef;
  heartbeat: WireMessage;
}

const sims: Sim[] = [];
const conf = new WickConf();
let timer: NodeJS.Timeout | undefined;
let sent = 0;
let askFailures = 0;
let lateness: number[] = [];
let rtts: number[] = [];

async function createAndRegister(): Promise<Sim> {
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'simWorker',
    host: '127.0.0.1',
    port: 0,
    conf,
  });
  const endpoint = new SimWorkerEndpoint();
  const self = env.setupEndpoint('Worker', endpoint);
  const master = await env.setupEndpointRef(masterAddress as string, 'Master');
  const port = env.rpcAddress?.port as number;
  const id = workerId(Date.now(), '127.0.0.1', port);
  master.send(
    RegisterWorker({
      id,
      host: '127.0.0.1',
      port,
      worker: self.toData(),
      cores: 8,
      memory: 32 * 1024,
      workerWebUiUrl: `http://127.0.0.1:${port}`,
      masterAddress: masterAddress as string,
    }),
  );
  await endpoint.registered;
  return { env, master, heartbeat: Heartbeat({ workerId: id, worker: self.toData() }) };
}

async function register(concurrency: number): Promise<unknown> {
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      sims.push(await createAndRegister());
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
  return { registered: sims.length, ms: performance.now() - t0 };
}

function start(startAt: number, probeEvery: number): void {
  if (timer) clearInterval(timer);
  // Worker j heartbeats at (j·slots + slot)/total of every second from startAt.
  const origin = startAt - performance.timeOrigin;
  const phase = sims.map((_, j) => ((j * slots + slot) / total) * 1000);
  let next = 0;
  let cycle = 0;
  const tick = () => {
    const now = performance.now();
    // Bounded: at most one heartbeat per worker per tick, even after a long stall.
    for (let n = 0; n < sims.length; n++) {
      const due = origin + cycle * 1000 + (phase[next] as number);
      if (due > now) break;
      const sim = sims[next] as Sim;
      sim.master.send(sim.heartbeat);
      sent++;
      lateness.push(now - due);
      if (probeEvery > 0 && next % probeEvery === 0) {
        const t0 = performance.now();
        sim.master.ask(BoundPortsRequest({}), { timeout: 30_000 }).then(
          () => rtts.push(performance.now() - t0),
          () => askFailures++,
        );
      }
      next++;
      if (next === sims.length) {
        next = 0;
        cycle++;
      }
    }
  };
  timer = setInterval(tick, 1);
}

function summary(xs: number[]): { n: number; p50: number; p99: number; max: number } {
  if (xs.length === 0) return { n: 0, p50: 0, p99: 0, max: 0 };
  const s = xs.sort((a, b) => a - b);
  return {
    n: s.length,
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    max: s[s.length - 1] as number,
  };
}

function stats(): unknown {
  const out = {
    sent,
    askFailures,
    latenessMs: summary(lateness),
    rttMs: rtts.slice(),
    memoryMB: process.memoryUsage().rss / (1024 * 1024),
  };
  sent = 0;
  askFailures = 0;
  lateness = [];
  rtts = [];
  return out;
}

serveCommands(async (c: Command) => {
  switch (c.cmd) {
    case 'register':
      return register(Number(c.concurrency ?? 32));
    case 'start':
      start(Number(c.startAt), Number(c.probeEvery ?? 0));
      return { started: sims.length };
    case 'stats':
      return stats();
    case 'halt':
      if (timer) clearInterval(timer);
      timer = undefined;
      return { halted: true };
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
});
// Leaving closes every socket; the master sees the workers disconnect (or is gone already).
exitWithParent(() => {
  if (timer) clearInterval(timer);
});
process.stdout.write(`${JSON.stringify({ pid: process.pid, count })}\n`);
