/**
 * Benchmark `heartbeat`: the CPU one Heartbeat costs a Master on its receive path (socket data →
 * LineDecoder → JSON-RPC → envelope and schema checks → Inbox → Master's handler), in this one
 * process, against the least a server on bare node:net does with the same bytes (split lines,
 * JSON.parse, a Map update), measured in the same run.
 *
 * It complements `master`, whose figures on a shared 2-core machine move with every other process's
 * load: here nothing else runs between the two sides and CPU time is this process's own
 * (process.cpuUsage), so the difference between them is what Wick's layers add per heartbeat.
 *
 * A real Master (startMaster) holds --workers workers. One loopback socket proves the cluster secret
 * at the handshake (wick.hello, wick.auth) as a worker does, and registers the first worker; the
 * others are put in the master's table directly, bound to that connection, because registration is
 * not what is measured. The socket sends one heartbeat per worker per round, two ways:
 *
 *   - chunked: --per-write heartbeats per write, so each read carries many: the per-message cost;
 *   - single: one heartbeat per write with a turn of the event loop between writes, so each read
 *     carries one, as with one socket per worker: adds the per-read cost. The writes are made from
 *     this process too and cost both sides alike, so here the difference is the figure to read.
 *
 * Rounds alternate between Wick and the bare server; each figure is the median µs of CPU per
 * heartbeat over --rounds rounds. Writes bench/results/heartbeat.json.
 *
 *   npm run bench -- heartbeat [--workers 10000] [--rounds 9] [--per-write 1000]
 */
import net from 'node:net';
import { parseArgs } from 'node:util';
import { WickConf } from '../backend/conf/WickConf.js';
import { MasterWebUI } from '../backend/http/MasterWebUI.js';
import type { OperationsContext } from '../backend/master/operations/context.js';
import { startMaster } from '../backend/master/startMaster.js';
import { WorkerInfo } from '../backend/master/WorkerInfo.js';
import { RegisterWorker } from '../backend/protocol/deploy.js';
import { setLogLevel } from '../backend/util/log.js';
import { workerId } from '../backend/worker/workerId.js';
import { int, sized } from './lib/args.js';
import { benchClusterSecret, rawHandshake } from './lib/auth.js';
import type { Goal } from './lib/goals.js';
import { machineLoad } from './lib/procStat.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

/** Issue 31's table: the CPU a heartbeat costs the master ≤ 1.1 × a bare node:net server's. */
const goals: Goal[] = [
  {
    figure: 'ratios.chunkedVsBare',
    op: '<=',
    value: 1.1,
    what: 'CPU per heartbeat ÷ bare, chunked',
  },
  {
    figure: 'ratios.singleVsBare',
    op: '<=',
    value: 1.1,
    what: 'CPU per heartbeat ÷ bare, one a read',
  },
];

const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: sized('10000', '200') },
    rounds: { type: 'string', default: sized('9', '2') },
    'per-write': { type: 'string', default: sized('1000', '50') },
  },
  strict: true,
});

const workers = int('workers', opts.workers, 1, 100_000);
const rounds = int('rounds', opts.rounds, 1, 100);
const perWrite = int('per-write', opts['per-write'], 2, 100_000);
/** The sender's env address: what the handshake names and every envelope's `from` repeats. */
const FROM = '127.0.0.1:1';

const ids = Array.from({ length: workers }, (_, i) =>
  workerId(Date.now(), '127.0.0.1', 20_000 + i),
);
const lines = ids.map(
  (id, i) =>
    `${JSON.stringify({
      jsonrpc: '2.0',
      method: 'Heartbeat',
      params: {
        to: 'Master',
        from: FROM,
        message: {
          type: 'Heartbeat',
          workerId: id,
          worker: { address: `127.0.0.1:${20_000 + i}`, name: 'Worker' },
        },
      },
    })}\n`,
);

/**
 * A server under test. One connection delivers in order, so a round is done once the last worker's
 * heartbeat is handled: `reset` forgets that one, `done` says whether it came back.
 */
interface Target {
  /** The sender's connection to it, after the handshake. */
  socket: net.Socket;
  reset(): void;
  done(): boolean;
  stop(): Promise<void>;
}

const lastId = ids[ids.length - 1] as string;

async function wickTarget(): Promise<Target> {
  const secret = benchClusterSecret();
  const running = await startMaster(
    new WickConf({
      'wick.master.host': '127.0.0.1',
      'wick.master.port': '0',
      'wick.master.ui.port': '0',
      'wick.worker.timeout': '3600s',
    }),
    { webUi: MasterWebUI.start },
  );
  const m = running.master;
  while (m.state !== 'ALIVE') await new Promise((r) => setTimeout(r, 10));
  // The sender is a worker as the master sees one: it proves the cluster secret, and the first
  // worker registers over its connection (RegisterWorker, the master's own handler). A worker's
  // messages count only over the connection it registered on (master/senders.ts), so the others,
  // put in the table directly (registration is not what is measured), are bound to it too.
  const socket = await connect(running.env.rpcAddress?.port as number, secret);
  const first = ids[0] as string;
  socket.write(
    `${JSON.stringify({
      jsonrpc: '2.0',
      method: 'RegisterWorker',
      params: {
        to: 'Master',
        from: FROM,
        message: RegisterWorker({
          id: first,
          host: '127.0.0.1',
          port: 20_000,
          worker: { address: '127.0.0.1:20000', name: 'Worker' },
          cores: 8,
          memory: 32 * 1024,
          workerWebUiUrl: 'http://127.0.0.1:20000',
          masterAddress: running.env.address,
        }),
      },
    })}\n`,
  );
  // The Master's tables are private: the bench reads them to see its first worker registered,
  // and adds the others at once (registering each over the wire would measure registration).
  const { cluster, clock } = Reflect.get(m, 'ops') as OperationsContext;
  const t0 = performance.now();
  while (!cluster.workerById(first)) {
    if (performance.now() - t0 > 30_000) throw new Error('the first worker did not register');
    await new Promise((r) => setTimeout(r, 10));
  }
  const connection = (cluster.workerById(first) as WorkerInfo).connection;
  for (const [i, id] of ids.entries()) {
    if (i === 0) continue;
    // Each at its own address, as the heartbeats say: the table keeps one worker per address.
    const ref = running.env.endpointRef({ address: `127.0.0.1:${20_000 + i}`, name: 'Worker' });
    cluster.addWorker(
      new WorkerInfo(id, '127.0.0.1', 20_000 + i, 8, 32 * 1024, ref, '', clock.now(), connection),
    );
  }
  const lastWorker = cluster.workerById(lastId) as WorkerInfo;
  // A round ends when the last worker's heartbeat lands. Its last heartbeat is set just before
  // now, not to 0: the master's own timeout check, which may run mid-round, would take 0 for a
  // worker silent for ages, remove it, and ignore its heartbeats from then on (a round that never
  // ended).
  let resetAt = 0;
  return {
    socket,
    reset: () => {
      resetAt = clock.now() - 1;
      lastWorker.lastHeartbeat = resetAt;
    },
    done: () => lastWorker.lastHeartbeat > resetAt,
    stop: () => running.stop(),
  };
}

/** The floor: split lines on bytes, JSON.parse, answer the handshake, note the time by id. */
async function bareTarget(): Promise<Target> {
  const last = new Map<string, number>();
  const server = net.createServer((socket) => {
    let pending: Buffer | undefined;
    const line = (text: string) => {
      const f = JSON.parse(text);
      if (f.method === 'wick.hello') {
        socket.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: f.id, result: { version: 1, from: '127.0.0.1:2' } })}\n`,
        );
        return;
      }
      last.set(f.params.message.workerId, Date.now());
    };
    socket.on('data', (chunk: Buffer) => {
      let start = 0;
      let nl = chunk.indexOf(0x0a);
      if (pending !== undefined && nl !== -1) {
        line(Buffer.concat([pending, chunk.subarray(0, nl)]).toString('utf8'));
        pending = undefined;
        start = nl + 1;
        nl = chunk.indexOf(0x0a, start);
      }
      while (nl !== -1) {
        line(chunk.toString('utf8', start, nl));
        start = nl + 1;
        nl = chunk.indexOf(0x0a, start);
      }
      if (start < chunk.length) {
        const rest = chunk.subarray(start);
        pending = pending === undefined ? Buffer.from(rest) : Buffer.concat([pending, rest]);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    socket: await connect((server.address() as net.AddressInfo).port, undefined),
    reset: () => last.delete(lastId),
    done: () => last.has(lastId),
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const turn = () => new Promise((r) => setImmediate(r));

/** Connects and shakes hands (proving the secret, if given); returns the socket. */
async function connect(port: number, secret: string | undefined): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((r) => socket.once('connect', r));
  await rawHandshake(socket, FROM, secret);
  // What the server sends after it (RegisteredWorker) is not read.
  socket.on('data', () => {});
  return socket;
}

/** µs of this process's CPU per heartbeat for one round of every worker's heartbeat. */
async function round1(target: Target, socket: net.Socket, chunked: boolean): Promise<number> {
  target.reset();
  const c0 = process.cpuUsage();
  if (chunked) {
    for (let i = 0; i < workers; i += perWrite) socket.write(lines.slice(i, i + perWrite).join(''));
  } else {
    for (const l of lines) {
      socket.write(l);
      await turn();
    }
  }
  while (!target.done()) await turn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / workers;
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  console.log(
    `heartbeat: ${fmt(workers)} workers, ${rounds} rounds each way, chunks of ${fmt(perWrite)} (${machineLoad()})`,
  );
  const sides = { wick: await wickTarget(), bare: await bareTarget() };
  const sockets = { wick: sides.wick.socket, bare: sides.bare.socket };
  const us = {
    wick: { chunked: [] as number[], single: [] as number[] },
    bare: { chunked: [] as number[], single: [] as number[] },
  };
  try {
    for (const side of ['wick', 'bare'] as const) {
      await round1(sides[side], sockets[side], true); // warm-up
    }
    for (let r = 0; r < rounds; r++) {
      for (const chunked of [true, false]) {
        for (const side of ['wick', 'bare'] as const) {
          us[side][chunked ? 'chunked' : 'single'].push(
            await round1(sides[side], sockets[side], chunked),
          );
        }
      }
    }
  } finally {
    sockets.wick.destroy();
    sockets.bare.destroy();
    await sides.wick.stop();
    await sides.bare.stop();
  }
  const m = {
    wickChunked: median(us.wick.chunked),
    bareChunked: median(us.bare.chunked),
    wickSingle: median(us.wick.single),
    bareSingle: median(us.bare.single),
  };
  printTable(
    `µs of CPU per heartbeat, median of ${rounds} rounds (${machineLoad()})`,
    ['', 'Wick Master', 'bare node:net', 'Wick − bare', 'Wick ÷ bare'],
    [
      [
        `chunked (${fmt(perWrite)} per read)`,
        fmt(m.wickChunked, 2),
        fmt(m.bareChunked, 2),
        fmt(m.wickChunked - m.bareChunked, 2),
        (m.wickChunked / m.bareChunked).toFixed(3),
      ],
      [
        'single (1 per read, sender included)',
        fmt(m.wickSingle, 2),
        fmt(m.bareSingle, 2),
        fmt(m.wickSingle - m.bareSingle, 2),
        (m.wickSingle / m.bareSingle).toFixed(3),
      ],
    ],
  );
  const file = writeResults('heartbeat', {
    goals,
    figures: {
      usPerHeartbeatChunked: round(m.wickChunked, 3),
      usPerHeartbeatSingle: round(m.wickSingle, 3),
      extraUsPerHeartbeatChunked: round(m.wickChunked - m.bareChunked, 3),
      extraUsPerHeartbeatSingle: round(m.wickSingle - m.bareSingle, 3),
    },
    baseline: {
      bareUsPerHeartbeatChunked: round(m.bareChunked, 3),
      bareUsPerHeartbeatSingle: round(m.bareSingle, 3),
    },
    ratios: {
      chunkedVsBare: round(m.wickChunked / m.bareChunked, 3),
      singleVsBare: round(m.wickSingle / m.bareSingle, 3),
    },
  });
  console.log(`\nWrote ${file}`);
}

await runBenchmark('heartbeat', main, 10 * 60_000);
