import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const fixture = fileURLToPath(new URL('../fixtures/rpc-peer.ts', import.meta.url));

let bundled: Promise<string> | undefined;

const BUNDLE_DIR = /^wick-rpc-peer-(\d+)$/;

/** Removes the bundles of test processes that died before their exit handler could. */
function removeStaleBundles(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(BUNDLE_DIR.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') {
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
      }
    }
  }
}

/**
 * The node arguments that run the peer. Loading the TypeScript sources through tsx costs about
 * half a second of CPU per process, a bundle a quarter of that; so the fixture is bundled once per
 * test process, from the current sources, into a temporary directory removed at exit (or, if
 * this process is killed, by the next one). WICK_TEST_PEER_TSX=1 runs the sources through tsx.
 */
function peerArgs(): Promise<string[]> {
  if (process.env.WICK_TEST_PEER_TSX === '1') return Promise.resolve(['--import', 'tsx', fixture]);
  bundled ??= (async () => {
    removeStaleBundles();
    const dir = join(tmpdir(), `wick-rpc-peer-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const outfile = join(dir, 'rpc-peer.mjs');
    await build({
      entryPoints: [fixture],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'inline',
      logLevel: 'warning',
    });
    return outfile;
  })();
  return bundled.then((file) => ['--enable-source-maps', file]);
}

export interface PeerOptions {
  name: string;
  host?: string;
  port?: number;
  clientMode?: boolean;
  conf?: Record<string, string>;
  endpoints?: string[];
  /** WICK_APP_CREDENTIAL's form, `app:<id>:<key>`: the key it dials with instead of conf's. */
  credential?: string;
  env?: NodeJS.ProcessEnv;
}

export interface PeerReply {
  id: number;
  ok: boolean;
  code?: number;
  error?: string;
  reply?: { type: string; [k: string]: unknown };
  entries?: string[];
  recordedAt?: Record<string, number>;
}

/** Every peer started and not yet exited, so that a test file can check it left none behind. */
const running = new Set<Peer>();

/** An RpcEnv in its own process (test/fixtures/rpc-peer.ts), stopped when the test ends. */
export class Peer {
  address = '';
  stderr = '';
  private nextId = 1;
  private readonly waiting = new Map<number, (r: PeerReply) => void>();
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    running.add(this);
    this.exited = new Promise((r) =>
      child.once('exit', (code) => {
        running.delete(this);
        // Commands the peer can no longer answer end as failures rather than hang.
        for (const [id, resolve] of this.waiting) {
          resolve({ id, ok: false, error: `peer exited (${code ?? child.signalCode})` });
        }
        this.waiting.clear();
        r(code);
      }),
    );
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
  }

  /** Peers whose process has not exited yet. */
  static running(): Peer[] {
    return [...running];
  }

  get pid(): number {
    return this.child.pid as number;
  }

  static async start(t: TestContext | undefined, options: PeerOptions): Promise<Peer> {
    const { env, ...rest } = options;
    const child = spawn(process.execPath, [...(await peerArgs()), JSON.stringify(rest)], {
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
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return Promise.resolve({ id, ok: false, error: 'peer exited' });
    }
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

  /** setupEndpointRef from the peer: ok when the endpoint exists. */
  verify(address: string, name: string): Promise<PeerReply> {
    return this.request({ cmd: 'verify', address, name });
  }

  /** Registers one more RecordingEndpoint in the peer's env. */
  setupEndpoint(name: string): Promise<PeerReply> {
    return this.request({ cmd: 'setupEndpoint', name });
  }

  async log(endpoint = 'Echo'): Promise<string[]> {
    return (await this.request({ cmd: 'log', endpoint })).entries ?? [];
  }

  /** When each TestRecord value reached the endpoint (the peer's Date.now()). */
  async recordedAt(endpoint = 'Echo'): Promise<Record<string, number>> {
    return (await this.request({ cmd: 'log', endpoint })).recordedAt ?? {};
  }

  /**
   * Polls an endpoint's log until `done` holds, and returns it. No deadline of its own: the
   * test's timeout ends a wait that never succeeds, and the error then shows the last log seen.
   */
  async waitForLog(
    t: TestContext,
    endpoint: string,
    done: (entries: string[]) => boolean,
  ): Promise<string[]> {
    for (;;) {
      const entries = await this.log(endpoint);
      if (done(entries)) return entries;
      if (t.signal.aborted) {
        throw new Error(`gave up waiting on the log of ${endpoint}: ${JSON.stringify(entries)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
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

/** A frame received by a RawClient: whatever JSON the env sent. */
export interface RawFrame {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: { type?: string; [k: string]: unknown };
  error?: { code: number; message: string; data?: unknown };
  /** Set instead of the fields above when a line was not JSON. */
  unparsed?: string;
}

/**
 * A bare TCP connection to an env, for tests that speak the wire protocol by hand: it writes
 * whatever it is given and collects every newline-delimited frame that comes back. Closed when
 * the test ends.
 */
export class RawClient {
  /** Frames received and not yet taken (unless `discard` is on). */
  readonly frames: RawFrame[] = [];
  /** Every frame received, counted even when discarded. */
  received = 0;
  /** Drop frames as they arrive (after counting them and passing them to `onFrame`). */
  discard = false;
  onFrame: ((f: RawFrame) => void) | undefined;
  readonly closed: Promise<void>;
  private pending: Buffer[] = [];
  private waiter: (() => void) | undefined;
  private nextId = 1;
  private isClosed = false;

  private constructor(readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => {});
    this.closed = new Promise((r) =>
      socket.once('close', () => {
        this.isClosed = true;
        this.wake();
        r();
      }),
    );
  }

  /** Connects to `host:port`; the socket is destroyed when the test ends. */
  static async connect(address: string, t?: TestContext): Promise<RawClient> {
    const i = address.lastIndexOf(':');
    const socket = net.connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)) });
    t?.after(() => {
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  get isOpen(): boolean {
    return !this.isClosed;
  }

  /** Writes bytes as they are; resolves once they are handed to the OS. */
  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.isClosed) return reject(new Error('RawClient: socket closed'));
      this.socket.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Writes one frame: `value` serialised (a string is sent verbatim) plus a newline. */
  send(value: unknown): Promise<void> {
    return this.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
  }

  /** The next frame that matches (default: any), waiting for it; it is removed from `frames`. */
  async take(match: (f: RawFrame) => boolean = () => true): Promise<RawFrame> {
    for (;;) {
      const i = this.frames.findIndex(match);
      if (i >= 0) return this.frames.splice(i, 1)[0] as RawFrame;
      if (this.isClosed) {
        throw new Error(`RawClient: closed without the frame; got ${JSON.stringify(this.frames)}`);
      }
      await new Promise<void>((r) => {
        this.waiter = r;
      });
    }
  }

  /** Sends a request with a fresh numeric id and returns the response with that id. */
  async call(method: unknown, params?: unknown, extra: object = {}): Promise<RawFrame> {
    const id = this.freshId();
    await this.send({ jsonrpc: '2.0', id, method, params, ...extra });
    return this.take((f) => f.id === id);
  }

  freshId(): number {
    return 1_000_000 + this.nextId++;
  }

  /** wick.hello as `from` (e.g. "client-x"); throws unless it succeeds. */
  async hello(from: string): Promise<RawFrame> {
    const r = await this.call('wick.hello', { version: 1, from });
    if (!r.result) throw new Error(`wick.hello failed: ${JSON.stringify(r)}`);
    return r;
  }

  /**
   * The authenticating handshake of docs/protocol.md ("With authentication"), proofs computed here
   * from the spec as any peer would: `key` is the cluster secret, or with `credential` the key
   * derived for that submission or application. Resolves with the server's last answer: the
   * `wick.auth` result `{ok: true}`, or the error frame that refused the peer (its `wick.hello`
   * or its `wick.auth`). Throws if the server's proof does not match `key`, unless `forging`: a
   * peer that does not hold the key sends its proof anyway.
   */
  async authHello(
    from: string,
    key: string,
    credential?: { kind: 'submission' | 'app' | 'token'; id: string },
    forging = false,
  ): Promise<RawFrame> {
    const nonce = randomBytes(16).toString('hex');
    const hello = await this.call('wick.hello', {
      version: 1,
      from,
      nonce,
      ...(credential ? { credential } : {}),
    });
    if (!hello.result) return hello;
    const { challenge, proof } = hello.result as { challenge?: string; proof?: string };
    if (!challenge) throw new Error(`the server sent no challenge: ${JSON.stringify(hello)}`);
    if (!forging && proof !== handshakeProof(key, `wick-server:${nonce}:${challenge}`)) {
      throw new Error(`the server did not prove our key: ${JSON.stringify(hello)}`);
    }
    return this.call('wick.auth', {
      proof: handshakeProof(key, `wick-client:${challenge}:${nonce}`),
    });
  }

  /** A one-way endpoint message (a notification): method = message.type, params = the envelope. */
  tell(from: string, to: string, message: { type: string; [k: string]: unknown }): Promise<void> {
    return this.send({ jsonrpc: '2.0', method: message.type, params: { to, from, message } });
  }

  /** An endpoint ask: method = message.type, params = the envelope. */
  ask(from: string, to: string, message: { type: string; [k: string]: unknown }) {
    return this.call(message.type, { to, from, message });
  }

  /** Resolves once the server has closed the connection (or it was closed here). */
  async waitClosed(): Promise<void> {
    await this.closed;
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        if (start < chunk.length) this.pending.push(chunk.subarray(start));
        break;
      }
      this.pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.pending).toString('utf8');
      this.pending = [];
      start = nl + 1;
      if (line.trim() === '') continue;
      let frame: RawFrame;
      try {
        frame = JSON.parse(line) as RawFrame;
      } catch {
        frame = { unparsed: line };
      }
      this.received++;
      this.onFrame?.(frame);
      if (!this.discard) this.frames.push(frame);
    }
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

/** HMAC-SHA256(key, text) as 64 hex digits: a handshake proof (docs/protocol.md). */
export function handshakeProof(key: string, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

/**
 * Resolves once the peer's stderr, from offset `from` on, matches `pattern`; rejects if the
 * process exits first. No deadline of its own: the test's timeout ends a wait that never succeeds.
 */
export function waitForStderr(peer: Peer, pattern: RegExp, from = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const m = pattern.exec(peer.stderr.slice(from));
      if (!m) return false;
      cleanup();
      resolve(m[0]);
      return true;
    };
    const onExit = () => {
      if (!check()) {
        cleanup();
        reject(new Error(`peer exited before its stderr matched ${pattern}:\n${peer.stderr}`));
      }
    };
    const onData = () => {
      check();
    };
    const cleanup = () => {
      peer.child.stderr?.off('data', onData);
      peer.child.off('exit', onExit);
    };
    peer.child.stderr?.on('data', onData);
    peer.child.once('exit', onExit);
    check();
  });
}
