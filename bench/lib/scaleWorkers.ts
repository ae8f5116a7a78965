/**
 * One process of simulated workers for the `scale` benchmark: many workers per process, several per
 * TCP connection. A process may hold at most `ulimit -n` sockets here (20,000, and not raisable
 * without CAP_SYS_RESOURCE), and so may the master: 100,000 workers cannot each hold a connection
 * to one master on such a machine. So each connection carries `perConnection` workers, each
 * registered over it by its own RegisterWorker (the master's own handler: ids, addresses, bounds,
 * persistence) and heartbeating as itself; the master's per-connection checks (senders.ts: a
 * worker's messages count only over the connection it registered on) hold for every one of them.
 * Each connection dials from its own loopback address across 127.0.0.0/8, as workers on separate
 * hosts do, so that ports never run short.
 *
 * Frames are written by hand (the wire format of docs/protocol.md): what is measured is the
 * master, and a simulator that costs little leaves the machine's CPU to it. Each connection proves
 * the cluster secret in WICK_AUTH_SECRET at the handshake (auth.ts), as a real worker does.
 *
 *   node --import tsx bench/lib/scaleWorkers.ts MASTER_HOST:PORT
 *
 * Commands on stdin (control.ts):
 *   register {firstConnection, connections, perConnection, concurrency}
 *        open the connections (numbered from firstConnection across all processes), register
 *        every worker, resolve once every RegisteredWorker came back
 *   start {intervalMs, startAt}   heartbeat every worker every intervalMs from startAt (epoch ms),
 *        phases spread evenly over the interval
 *   silence {index}               stop one worker's heartbeats; answers the time of its last one
 *   stats {}                      heartbeats sent and send lateness since the last stats
 *   halt {}                       stop heartbeating
 */
import net from 'node:net';
import { workerId } from '../../backend/worker/workerId.js';
import { rawHandshake } from './auth.js';
import { type Command, serveCommands } from './control.js';
import { exitWithParent } from './process.js';
import { percentile } from './stats.js';

const [masterAddress] = process.argv.slice(2);
const colon = masterAddress?.lastIndexOf(':') ?? -1;
if (!masterAddress || colon < 0) throw new Error('usage: scaleWorkers.ts MASTER_HOST:PORT');
const masterHost = masterAddress.slice(0, colon);
const masterPort = Number(masterAddress.slice(colon + 1));
const secret = process.env.WICK_AUTH_SECRET || undefined;

interface Conn {
  socket: net.Socket;
  from: string;
  /** Each worker's Heartbeat frame, ready to write. */
  heartbeats: string[];
  /** Global worker index of heartbeats[0]. */
  first: number;
  registered: number;
}

const conns: Conn[] = [];
let timer: NodeJS.Timeout | undefined;
let sent = 0;
let lateness: number[] = [];
const silenced = new Set<number>();
const lastSent = new Map<number, number>();

/** Connection `c`'s loopback host: 127.a.b.x with x in 1..254, never 127.0.0.x (the master's). */
function hostOf(c: number): string {
  const net24 = Math.floor(c / 254) + 1;
  return `127.${(net24 >> 8) & 0xff}.${net24 & 0xff}.${(c % 254) + 1}`;
}

function frame(method: string, from: string, message: object): string {
  return `${JSON.stringify({ jsonrpc: '2.0', method, params: { to: 'Master', from, message } })}\n`;
}

async function openConnection(c: number, first: number, perConnection: number): Promise<Conn> {
  const host = hostOf(c);
  const socket = net.connect({ host: masterHost, port: masterPort, localAddress: host });
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const from = `client-scale-${c}`;
  await rawHandshake(socket, from, secret);
  const conn: Conn = { socket, from, heartbeats: [], first, registered: 0 };
  let text = '';
  let failed: string | undefined;
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n')) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      // Only what registration answers matters here; anything else the master sends is dropped.
      if (line.includes('"RegisteredWorker"')) conn.registered++;
      else if (line.includes('"RegisterWorkerFailed"')) failed = line.slice(0, 300);
    }
  });
  socket.on('error', () => {});
  const register: string[] = [];
  for (let k = 0; k < perConnection; k++) {
    const port = 20_000 + k;
    const id = workerId(Date.now(), host, port);
    const worker = { address: `${host}:${port}`, name: 'Worker' };
    register.push(
      frame('RegisterWorker', from, {
        type: 'RegisterWorker',
        id,
        host,
        port,
        worker,
        cores: 8,
        memory: 32 * 1024,
        workerWebUiUrl: `http://${host}:${port + 10_000}`,
        masterAddress,
      }),
    );
    conn.heartbeats.push(frame('Heartbeat', from, { type: 'Heartbeat', workerId: id, worker }));
  }
  socket.write(register.join(''));
  const t0 = performance.now();
  while (conn.registered < perConnection) {
    if (failed) throw new Error(`registration refused: ${failed}`);
    if (socket.destroyed) throw new Error(`connection ${c}: the master hung up`);
    if (performance.now() - t0 > 600_000) throw new Error(`connection ${c}: no answer in 10 min`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return conn;
}

async function register(
  firstConnection: number,
  connections: number,
  perConnection: number,
  concurrency: number,
): Promise<unknown> {
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < connections) {
      const c = firstConnection + next++;
      conns.push(await openConnection(c, c * perConnection, perConnection));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
  const workers = conns.reduce((n, c) => n + c.registered, 0);
  return { workers, ms: performance.now() - t0 };
}

function start(intervalMs: number, startAt: number): void {
  if (timer) clearInterval(timer);
  const all = conns.flatMap((c) => c.heartbeats.map((h, k) => ({ c, h, index: c.first + k })));
  // Worker j heartbeats at j/all of every interval from startAt, as independent workers would.
  const origin = startAt - performance.timeOrigin;
  let next = 0;
  let cycle = 0;
  const tick = () => {
    const now = performance.now();
    const writes = new Map<Conn, string[]>();
    for (let n = 0; n < all.length; n++) {
      const due = origin + cycle * intervalMs + (next / all.length) * intervalMs;
      if (due > now) break;
      const w = all[next] as (typeof all)[number];
      if (!silenced.has(w.index)) {
        const list = writes.get(w.c);
        if (list) list.push(w.h);
        else writes.set(w.c, [w.h]);
        sent++;
        lateness.push(now - due);
        lastSent.set(w.index, Date.now());
      }
      next++;
      if (next === all.length) {
        next = 0;
        cycle++;
      }
    }
    // What comes due in the same tick on one connection goes in one write, as a socket would.
    for (const [c, list] of writes) c.socket.write(list.join(''));
  };
  timer = setInterval(tick, 5);
}

function stats(): unknown {
  const s = lateness.sort((a, b) => a - b);
  const out = {
    sent,
    latenessP99Ms: s.length ? percentile(s, 99) : 0,
    rssMB: process.memoryUsage().rss / (1024 * 1024),
  };
  sent = 0;
  lateness = [];
  return out;
}

serveCommands(async (c: Command) => {
  switch (c.cmd) {
    case 'register':
      return register(
        Number(c.firstConnection),
        Number(c.connections),
        Number(c.perConnection),
        Number(c.concurrency ?? 16),
      );
    case 'start':
      start(Number(c.intervalMs), Number(c.startAt));
      return { started: true };
    case 'silence': {
      const index = Number(c.index);
      silenced.add(index);
      return { lastHeartbeatAt: lastSent.get(index) ?? 0 };
    }
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
exitWithParent(() => {
  if (timer) clearInterval(timer);
  for (const c of conns) c.socket.destroy();
});
process.stdout.write(`${JSON.stringify({ pid: process.pid })}\n`);
