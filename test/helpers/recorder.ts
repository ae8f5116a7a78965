/**
 * The pieces the master mocks share: an endpoint that records what it receives and lets a test
 * wait for a message, a listening RpcEnv that ends with the test, and a subscribed client of the
 * master's state (MasterStateMirror) to wait on pushed state instead of polling.
 */
import type { TestContext } from 'node:test';
import { MasterStateMirror } from '../../backend/client/MasterStateMirror.js';
import type { AnyMessageDef, MessageOf, WireMessage } from '../../backend/protocol/registry.js';
import { type MasterStateResponse, RequestMasterState } from '../../backend/protocol/state.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  RpcEnv,
  type RpcSenderContext,
} from '../../backend/rpc/index.js';
import { setLogLevel } from '../../backend/util/log.js';
import { testProtocol } from './protocol.js';

// The mocks' RpcEnvs log connection churn at INFO; the master's own log is what tests read.
setLogLevel('WARN');

export type Msg = WireMessage & Record<string, unknown>;

/**
 * An endpoint that records every one-way message and lets a test wait for one: it registers a
 * handler for each one-way definition of the test protocol (asks it refuses, as before).
 */
export class Recorder extends RpcEndpoint {
  readonly received: Msg[] = [];
  /** Called on every message after it is recorded (and answered, see `answer`). */
  onMessage: ((m: Msg) => void) | undefined;
  /** The connection each message type last came over (a mock answers over it, as Wick does). */
  readonly lastSender = new Map<string, RpcSenderContext>();
  private waiters = new Set<() => void>();
  private readonly answers = new Map<string, (m: Msg) => void>();

  constructor() {
    super();
    const record = (message: WireMessage, sender: RpcSenderContext) => {
      this.lastSender.set(message.type, sender);
      this.record(message as Msg);
    };
    for (const def of testProtocol.all()) if (def.replies === undefined) this.on(def, record);
  }

  /** Runs `fn` on every message of `def` once it is recorded: the mock's answer to it. */
  answer<D extends AnyMessageDef>(def: D, fn: (m: MessageOf<D>) => void): void {
    if (this.answers.has(def.type)) throw new Error(`Recorder already answers ${def.type}`);
    // The inbox checked the message against def's schema before it reached record().
    this.answers.set(def.type, fn as (m: Msg) => void);
  }

  private record(message: Msg): void {
    this.received.push(message);
    this.answers.get(message.type)?.(message);
    this.onMessage?.(message);
    for (const w of [...this.waiters]) w();
  }

  /** Messages of `type` received so far (from index `from` on). */
  all(type: string, from = 0): Msg[] {
    return this.received.slice(from).filter((m) => m.type === type);
  }

  /**
   * The first message of `type` at index ≥ `from` for which `match` holds, waiting for it; given
   * a definition, typed by it. No deadline of its own: the test's timeout ends a wait that never
   * succeeds.
   */
  next<D extends AnyMessageDef>(
    def: D,
    match?: (m: MessageOf<D>) => boolean,
    from?: number,
  ): Promise<MessageOf<D>>;
  next(type: string, match?: (m: Msg) => boolean, from?: number): Promise<Msg>;
  next(
    what: string | AnyMessageDef,
    match: (m: Msg) => boolean = () => true,
    from = 0,
  ): Promise<Msg> {
    const type = typeof what === 'string' ? what : what.type;
    return new Promise((resolve) => {
      const check = (): boolean => {
        const m = this.received.slice(from).find((x) => x.type === type && match(x));
        if (!m) return false;
        this.waiters.delete(check);
        resolve(m);
        return true;
      };
      if (!check()) this.waiters.add(check);
    });
  }

  /** Resolves once `count` messages of `type` (matching) have arrived since `from`. */
  async count(type: string, count: number, from = 0, match: (m: Msg) => boolean = () => true) {
    await new Promise<void>((resolve) => {
      const check = (): boolean => {
        if (this.all(type, from).filter(match).length < count) return false;
        this.waiters.delete(check);
        resolve();
        return true;
      };
      if (!check()) this.waiters.add(check);
    });
    return this.all(type, from).filter(match);
  }

  /** The index the next message will get: pass it as `from` to wait for later messages only. */
  get mark(): number {
    return this.received.length;
  }
}

/** host:port from wick://host:port. */
export function addressOf(masterUrl: string): string {
  return masterUrl.replace(/^wick:\/\//, '').replace(/\/.*$/, '');
}

export async function serverEnv(t: TestContext, name: string, port = 0): Promise<RpcEnv> {
  const env = await RpcEnv.create({ protocol: testProtocol, name, host: '127.0.0.1', port });
  t.after(() => env.stop());
  return env;
}

export type MasterState = MessageOf<typeof MasterStateResponse>;

/** A client of the master: a MasterStateMirror subscribed to it, and a ref to ask it things. */
export interface MasterClient {
  env: RpcEnv;
  master: RpcEndpointRef;
  mirror: MasterStateMirror;
  /** Resolves with the first mirrored state for which `predicate` holds. */
  waitFor(predicate: (s: MasterState) => boolean): Promise<MasterState>;
  /** A fresh snapshot (RequestMasterState). */
  state(): Promise<MasterState>;
}

export async function connectClient(t: TestContext, masterUrl: string): Promise<MasterClient> {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'testClient', clientMode: true });
  t.after(() => env.stop());
  const master = await env.setupEndpointRef(addressOf(masterUrl), 'Master');
  const mirror = new MasterStateMirror();
  env.setupEndpoint('StateMirror', mirror);
  await mirror.subscribe(master);
  return {
    env,
    master,
    mirror,
    waitFor: (p) => mirror.waitFor(p),
    state: () => master.ask(RequestMasterState({})),
  };
}

/** The worker with this id in a state, if listed. */
export function workerIn(s: MasterState, id: string) {
  return s.workers.find((w) => w.id === id);
}

/** The application with this id, active or completed. */
export function appIn(s: MasterState, id: string) {
  return [...s.activeApps, ...s.completedApps].find((a) => a.id === id);
}

/** The driver with this id, active or completed. */
export function driverIn(s: MasterState, id: string) {
  return [...s.activeDrivers, ...s.completedDrivers].find((d) => d.id === id);
}
