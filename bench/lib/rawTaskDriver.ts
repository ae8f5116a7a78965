/**
 * The driver side of the `tasks` benchmark's baseline, in the benchmark process: a TCP server that
 * raw executors (rawTaskExecutor.ts) connect to, and a loop that keeps `inFlight` tasks outstanding
 * on each executor, sending minimal task messages as NDJSON and the next task as soon as one
 * finishes (what Wick's driver does with an executor's free cores).
 */
import net from 'node:net';

interface Peer {
  id: string;
  socket: net.Socket;
  outstanding: number;
}

export class RawTaskDriver {
  private readonly peers: Peer[] = [];
  private inFlight = 1;
  private waiters: (() => void)[] = [];
  private job:
    | { next: number; total: number; done: number; resolve: () => void; reject: (e: Error) => void }
    | undefined;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  static async listen(): Promise<RawTaskDriver> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new RawTaskDriver(server, (server.address() as net.AddressInfo).port);
  }

  get executors(): number {
    return this.peers.length;
  }

  /** Resolves once `n` executors have connected and said who they are. */
  async waitForExecutors(n: number, timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.peers.length < n) {
      if (performance.now() > deadline)
        throw new Error(`only ${this.peers.length} of ${n} raw executors connected`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Runs `total` tasks, `inFlight` outstanding per executor; resolves when all have finished. */
  run(total: number, inFlight: number): Promise<void> {
    if (this.job) throw new Error('a job is already running');
    return new Promise<void>((resolve, reject) => {
      this.job = { next: 0, total, done: 0, resolve, reject };
      this.inFlight = inFlight;
      for (const p of this.peers) this.fill(p, inFlight);
    });
  }

  private fill(p: Peer, inFlight: number): void {
    const job = this.job;
    if (!job) return;
    let out = '';
    while (p.outstanding < inFlight && job.next < job.total) {
      const taskId = job.next++;
      p.outstanding++;
      out += `${JSON.stringify({ taskId, partition: taskId, executorId: p.id })}\n`;
    }
    if (out) p.socket.write(out);
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    let peer: Peer | undefined;
    let buf = '';
    socket.on('data', (chunk: string) => {
      buf += chunk;
      let nl = buf.indexOf('\n');
      let finished = 0;
      while (nl !== -1) {
        const msg = JSON.parse(buf.slice(0, nl)) as { register?: string; taskId?: number };
        buf = buf.slice(nl + 1);
        if (msg.register !== undefined) {
          peer = { id: msg.register, socket, outstanding: 0 };
          this.peers.push(peer);
          for (const w of this.waiters.splice(0)) w();
        } else if (peer) {
          peer.outstanding--;
          finished++;
        }
        nl = buf.indexOf('\n');
      }
      const job = this.job;
      if (!job || !peer || finished === 0) return;
      job.done += finished;
      if (job.done >= job.total) {
        this.job = undefined;
        job.resolve();
        return;
      }
      this.fill(peer, this.inFlight);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      const job = this.job;
      if (peer && job) {
        this.job = undefined;
        job.reject(new Error(`raw executor ${peer.id} disconnected during a job`));
      }
    });
  }

  async close(): Promise<void> {
    for (const p of this.peers) p.socket.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
