/**
 * A hostile peer against real daemons (test/security/): the two ways a cluster runs (open, and
 * authenticating, the default), the guises a peer can take in each (a stranger, a holder of the
 * cluster secret that is not the process it pretends to be, a holder of one application's key), a
 * raw connection in that guise, and the daemon log lines that show a refusal.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { defaultSecretFile } from '../../backend/rpc/clusterSecret.js';
import type { WickProcess } from './cli.js';
import type { Daemon } from './cluster.js';
import { RawClient, type RawFrame } from './peer.js';
import { waitFor } from './processes.js';

/** How every process of a test cluster is configured: the two ways to run one. */
export interface Mode {
  readonly name: string;
  readonly open: boolean;
  /** --conf of every process: daemons, `wick submit`, the test's own clients. */
  readonly conf: Record<string, string>;
}

export const OPEN: Mode = {
  name: 'authentication off (wick.authenticate=false everywhere)',
  open: true,
  conf: { 'wick.authenticate': 'false' },
};

/** The default: the master makes the secret in $XDG_CONFIG_HOME/wick/cluster-secret (scripts/test.mjs gives each run its own). */
export const AUTH: Mode = { name: 'authentication on (the default)', open: false, conf: {} };

export const MODES: readonly Mode[] = [OPEN, AUTH];

/** `--conf k=v …` of a mode, for a `wick` command line. */
export function confArgs(conf: Record<string, string>): string[] {
  return Object.entries(conf).flatMap(([k, v]) => ['--conf', `${k}=${v}`]);
}

/** The secret a master of this test run generated (its default secret file). */
export function clusterSecret(): string {
  return readFileSync(defaultSecretFile(), 'utf8').split('\n')[0]?.trim() as string;
}

/** An application's key, as a worker hands it to its executor (WICK_APP_CREDENTIAL). */
export interface AppCredential {
  kind: 'submission' | 'app' | 'token';
  id: string;
  key: string;
}

/** The WICK_APP_CREDENTIAL in a running process's environment (/proc/<pid>/environ), if any. */
export function credentialOf(pid: number): AppCredential | undefined {
  const entry = environOf(pid).find((e) => e.startsWith('WICK_APP_CREDENTIAL='));
  if (!entry) return undefined;
  const [kind, id, key] = entry.slice('WICK_APP_CREDENTIAL='.length).split(':');
  assert.ok(kind === 'app' || kind === 'submission', entry);
  return { kind, id: id as string, key: key as string };
}

/** The key of `app:<id>` under `secret`, as docs/protocol.md derives it ("With authentication"). */
export function appKey(secret: string, id: string): AppCredential {
  return {
    kind: 'app',
    id,
    key: createHmac('sha256', secret).update(`wick-app-key:${id}`).digest('hex'),
  };
}

export function environOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
}

export function cmdlineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/**
 * Who the hostile peer is:
 * - `stranger`: nothing but the wire protocol (in an authenticating cluster it never gets in);
 * - `secret`: it holds the cluster secret, but it is not the process whose messages it forges
 *   (another worker's, the master's) — it did not dial, or register, what it pretends to be;
 * - `app`: it holds one application's key (read from an executor's environment, as that
 *   application's code could).
 */
export type Guise =
  | { readonly kind: 'stranger' }
  /** It claims the cluster secret with a key of its own (WRONG_SECRET). */
  | { readonly kind: 'guesser' }
  | { readonly kind: 'secret'; readonly secret: string }
  | { readonly kind: 'app'; readonly credential: AppCredential };

export function guiseText(g: Guise): string {
  return g.kind === 'stranger'
    ? 'a stranger'
    : g.kind === 'guesser'
      ? 'a peer guessing the secret'
      : g.kind === 'secret'
        ? 'a holder of the cluster secret'
        : `a holder of ${g.credential.kind}:${g.credential.id}'s key`;
}

/** How the refusing side names a guise's principal in its log ("open", "cluster", "app:app-…"). */
export function principalOf(g: Guise): string {
  if (g.kind === 'app') return `${g.credential.kind}:${g.credential.id}`;
  return g.kind === 'stranger' ? 'open' : 'cluster';
}

let peers = 0;

/** A `from` of its own for each hostile connection, so that each gets its own log line. */
export function hostileName(): string {
  return `client-hostile${++peers}`;
}

/** A raw connection to `address` after a handshake in guise `g`, announcing `from`. */
export class HostilePeer {
  private constructor(
    readonly raw: RawClient,
    readonly from: string,
    readonly guise: Guise,
  ) {}

  /** Connects and handshakes; throws if the handshake is refused (see refusedAtHandshake). */
  static async connect(
    t: TestContext | undefined,
    address: string,
    g: Guise,
    from = hostileName(),
  ): Promise<HostilePeer> {
    const raw = await RawClient.connect(address, t);
    const answer = await handshake(raw, from, g);
    if (answer.error) {
      raw.close();
      throw new Error(`${guiseText(g)} was refused at the handshake: ${JSON.stringify(answer)}`);
    }
    return new HostilePeer(raw, from, g);
  }

  /** A one-way message, as the forger's real attack sends it. */
  tell(to: string, message: { type: string; [k: string]: unknown }): Promise<void> {
    return this.raw.tell(this.from, to, message);
  }

  /** The same message as an ask: the refusal comes back as an error. */
  ask(to: string, message: { type: string; [k: string]: unknown }): Promise<RawFrame> {
    return this.raw.ask(this.from, to, message);
  }

  /** Frames the daemon sent on this connection, handshake replies and answers to asks taken out. */
  get unasked(): RawFrame[] {
    return this.raw.frames;
  }

  close(): void {
    this.raw.close();
  }
}

/** The handshake of guise `g`: its last answer (a result, or the error that refused it). */
function handshake(raw: RawClient, from: string, g: Guise): Promise<RawFrame> {
  switch (g.kind) {
    case 'stranger':
      return raw.call('wick.hello', { version: 1, from });
    case 'guesser':
      return raw.authHello(from, WRONG_SECRET, undefined, true);
    case 'secret':
      return raw.authHello(from, g.secret);
    case 'app':
      return raw.authHello(from, g.credential.key, {
        kind: g.credential.kind,
        id: g.credential.id,
      });
  }
}

/**
 * Checks that guise `g` is refused at the handshake: `-32005` with the reason, then the daemon
 * closes the connection. Returns the error's message.
 */
export async function refusedAtHandshake(
  t: TestContext,
  address: string,
  g: Guise,
): Promise<string> {
  const raw = await RawClient.connect(address, t);
  const answer = await handshake(raw, hostileName(), g);
  assert.equal(answer.error?.code, -32005, `${guiseText(g)}: ${JSON.stringify(answer)}`);
  await raw.waitClosed();
  return answer.error?.message as string;
}

/** A stranger's key: 16 bytes nobody derived from the cluster secret. */
export const WRONG_SECRET = 'not-the-cluster-secret-0123456789';

/** Asserts that an ask was refused as NotPermitted (-32030), naming what and why. */
export function assertNotPermitted(answer: RawFrame, what: RegExp): void {
  assert.equal(answer.error?.code, -32030, JSON.stringify(answer));
  assert.match(answer.error?.message ?? '', /^Not permitted: /);
  assert.match(answer.error?.message ?? '', what);
}

/** Lines of a daemon's log that record a refusal of `what` from `from`. */
export function refusals(log: string, what: string, from: string): string[] {
  return log
    .split('\n')
    .filter((l) => l.includes(`Refused ${what}`) && l.includes(` from ${from} (`));
}

/** A pattern for the refusal line of `what` from `from` proving `principal`. */
export function refusalLine(what: string, from: string, principal: string): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `WARN[^\\n]*Refused ${esc(what)}[^\\n]* from ${esc(from)} \\(${esc(principal)}, inbound\\): [^\\n]+`,
  );
}

/** Where a process logs: a daemon's stderr, or a `wick submit` driver's. */
export interface LogSource {
  text(): string;
  /** Resolves once the log matches; the test's timeout bounds the wait. */
  waitFor(pattern: RegExp): Promise<unknown>;
}

export function daemonLog(d: Daemon): LogSource {
  return { text: () => d.stderr, waitFor: (p) => d.waitForStderr(p) };
}

export function processLog(p: WickProcess): LogSource {
  return {
    text: p.stderr,
    waitFor: (re) => waitFor(`${re} in the driver's log`, () => re.test(p.stderr())),
  };
}

export interface RefusalCase {
  log: LogSource;
  peer: HostilePeer;
  /** The endpoint the forged message goes to, and the message. */
  to: string;
  message: { type: string; [k: string]: unknown };
  /**
   * An ask answered only once the forged message was handled: undefined to send the forged
   * message itself as an ask, which must be refused with -32030 (a refusal before its handler
   * runs); or, for one refused by its handler (which a one-way message never reaches as an ask),
   * another ask to the same endpoint, which is served in order after it.
   */
  barrier?: { type: string; [k: string]: unknown };
  /** Another message this peer may not send (to any endpoint of the env), sent last: its log line proves the log has caught up. */
  canary: { to: string; message: { type: string; [k: string]: unknown } };
}

/**
 * Sends a forged message twice one-way (and as an ask, or a barrier ask after it), then the
 * canary; once the canary's refusal is in the log, checks that the forged message's refusal was
 * logged exactly once, naming the peer, its principal and why (docs/protocol.md: once per
 * connection and message type).
 */
export async function refusedOnce(c: RefusalCase): Promise<void> {
  const { peer, message } = c;
  await peer.tell(c.to, message);
  await peer.tell(c.to, message);
  if (c.barrier === undefined) {
    assertNotPermitted(
      await peer.ask(c.to, message),
      new RegExp(`^Not permitted: ${message.type}`),
    );
  } else {
    const answer = await peer.ask(c.to, c.barrier);
    assert.ok(answer.result, `${c.barrier.type}: ${JSON.stringify(answer)}`);
  }
  await peer.tell(c.canary.to, c.canary.message);
  await c.log.waitFor(refusalLine(c.canary.message.type, peer.from, principalOf(peer.guise)));
  const lines = refusals(c.log.text(), message.type, peer.from);
  assert.equal(lines.length, 1, `${guiseText(peer.guise)}: ${lines.join('\n')}`);
  assert.match(lines[0] as string, refusalLine(message.type, peer.from, principalOf(peer.guise)));
}
