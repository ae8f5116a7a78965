import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('../fixtures/rpc-peer.ts', import.meta.url));

export interface PeerOptions {
  name: string;
  host?: string;
  port?: number;
  clientMode?: boolean;
  conf?: Record<string, string>;
  endpoints?: string[];
  env?: NodeJS.ProcessEnv;
}

export interface PeerReply {
  id: number;
  ok: boolean;
  code?: number;
  error?: string;
  reply?: { type: string; [k: string]: unknown };
  entries?: string[];
}

/** An RpcEnv in its own process (test/fixtures/rpc-peer.ts), stopped when the test ends. */
export class Peer {
  address = '';
  stderr = '';
  private nextId = 1;
  private readonly waiting = new Map<number, (r: PeerReply) => void>();
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    this.exited = new Promise((r) => child.once('exit', (code) => r(code)));
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
  }

  static async start(t: TestContext | undefined, options: PeerOptions): Promise<Peer> {
    const { env, ...rest } = options;
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify(rest)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const peer = new Peer(child);
    t?.after(() => peer.kill());
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const first = await new Promise<{ address?: string; error?: string }>((resolve, reject) => {
      lines.once('line', (l) => resolve(JSON.parse(l)));
      child.once('exit', (code) =>
        reject(new Error(`peer exited with ${code} before it was ready:\n${peer.stderr}`)),
      );
    });
    if (!first.address) throw new Error(`peer failed: ${first.error}\n${peer.stderr}`);
    peer.address = first.address;
    lines.on('line', (l) => {
      const r = JSON.parse(l) as PeerReply;
      peer.waiting.get(r.id)?.(r);
      peer.waiting.delete(r.id);
    });
    return peer;
  }

  request(cmd: Record<string, unknown>): Promise<PeerReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, resolve);
      this.child.stdin?.write(`${JSON.stringify({ id, ...cmd })}\n`, (err) => err && reject(err));
    });
  }

  ask(address: string, name: string, message: object, timeout?: number): Promise<PeerReply> {
    return this.request({ cmd: 'ask', address, name, message, timeout });
  }

  send(address: string, name: string, message: object): Promise<PeerReply> {
    return this.request({ cmd: 'send', address, name, message });
  }

  async log(endpoint = 'Echo'): Promise<string[]> {
    return (await this.request({ cmd: 'log', endpoint })).entries ?? [];
  }

  /** Stops the env cleanly and returns what its endpoints recorded. */
  async stop(): Promise<string[]> {
    const r = await this.request({ cmd: 'stop' });
    await this.exited;
    return r.entries ?? [];
  }

  /** SIGKILL, for tests of a peer that dies; also the cleanup of every test. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}
