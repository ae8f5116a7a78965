/**
 * Ports and sockets for tests that run RpcEnvs in other processes: free and occupied ports on
 * loopback, and the TCP sockets a process holds, read from /proc (Linux), so that a test can count
 * the connections between two processes or check that one listens on nothing.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';

const HOST = '127.0.0.1';

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, HOST, () => resolve(server));
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port on 127.0.0.1 that nothing listens on (the OS's pick, released at once). */
export async function unusedPort(): Promise<number> {
  const server = await listen(0);
  const { port } = server.address() as net.AddressInfo;
  await close(server);
  return port;
}

/** `count` consecutive ports on 127.0.0.1, each held by a listening server of this process. */
export class HeldPorts {
  private constructor(
    readonly base: number,
    private readonly servers: Map<number, net.Server>,
  ) {}

  /** Asks the OS for a free port and holds it and the next ones; retries if one is taken. */
  static async acquire(count: number): Promise<HeldPorts> {
    for (;;) {
      const base = await unusedPort();
      if (base + count - 1 > 65535) continue;
      const servers = new Map<number, net.Server>();
      try {
        for (let p = base; p < base + count; p++) servers.set(p, await listen(p));
        return new HeldPorts(base, servers);
      } catch {
        await Promise.all([...servers.values()].map(close));
      }
    }
  }

  /** Frees one port, so that the next bind to it succeeds. */
  async release(port: number): Promise<void> {
    const server = this.servers.get(port);
    if (!server) throw new Error(`port ${port} is not held`);
    this.servers.delete(port);
    await close(server);
  }

  async releaseAll(): Promise<void> {
    const servers = [...this.servers.values()];
    this.servers.clear();
    await Promise.all(servers.map(close));
  }
}

export interface TcpSocket {
  local: string;
  remote: string;
  state: 'ESTABLISHED' | 'LISTEN' | 'OTHER';
}

/** The TCP sockets (IPv4 and IPv6) open in process `pid`, with `host:port` as /proc shows them. */
export function tcpSocketsOf(pid: number): TcpSocket[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1] as string);
    } catch {
      // The fd closed while we looked.
    }
  }
  const sockets: TcpSocket[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (!inodes.has(f[9] as string)) continue;
      const st = f[3];
      sockets.push({
        local: endpoint(f[1] as string),
        remote: endpoint(f[2] as string),
        state: st === '01' ? 'ESTABLISHED' : st === '0A' ? 'LISTEN' : 'OTHER',
      });
    }
  }
  return sockets;
}

/** /proc's hex `ADDR:PORT` with the port in decimal; the address stays hex, which is enough to compare. */
function endpoint(hex: string): string {
  const [addr, port] = hex.split(':') as [string, string];
  return `${addr}:${Number.parseInt(port, 16)}`;
}

/** The established TCP connections between processes `a` and `b` (each seen from a's side). */
export function connectionsBetween(a: number, b: number): TcpSocket[] {
  const bSides = new Set(
    tcpSocketsOf(b)
      .filter((s) => s.state === 'ESTABLISHED')
      .map((s) => `${s.local}>${s.remote}`),
  );
  return tcpSocketsOf(a).filter(
    (s) => s.state === 'ESTABLISHED' && bSides.has(`${s.remote}>${s.local}`),
  );
}
