import net from 'node:net';
import tls from 'node:tls';
import { SslConf } from '../../conf/ssl.js';
import type { WickConf } from '../../conf/WickConf.js';
import { getLogger } from '../../util/log.js';
import { readConfiguredCertificate, type ServedCertificate } from './clusterCertificate.js';
import {
  type Fingerprint,
  fingerprintOfDer,
  fingerprintOfPem,
  parseFingerprints,
} from './fingerprint.js';
import { isLoopbackHost } from './loopback.js';

const log = getLogger('Connection');

/**
 * The environment variable a worker gives the processes it starts (and `wick submit` its driver):
 * the fingerprints of the masters' certificates it pins. Not a secret: it is printed in the join
 * line. Named here, beside the transport that reads it, as WICK_APP_CREDENTIAL is.
 */
export const TLS_FINGERPRINT_ENV = 'WICK_TLS_FINGERPRINT';

/**
 * wick.ssl.enabled and wick.ssl.loopback as a driver hands them to its executors (through the
 * application's command environment), which start before any setting of the application reaches
 * them: Spark passes spark.ssl.* on an executor's command line for the same reason.
 */
export const SSL_ENABLED_ENV = 'WICK_SSL_ENABLED';
export const SSL_LOOPBACK_ENV = 'WICK_SSL_LOOPBACK';

/** The environment that carries this conf's wick.ssl switches to an executor: those not default. */
export function sslChildEnv(conf: WickConf): Record<string, string> {
  const env: Record<string, string> = {};
  if (!conf.get(SslConf.enabled)) env[SSL_ENABLED_ENV] = 'false';
  if (conf.get(SslConf.loopback)) env[SSL_LOOPBACK_ENV] = 'true';
  return env;
}

/** The first byte of every TLS connection: a handshake record (RFC 8446, 5.1). */
const TLS_HANDSHAKE_RECORD = 0x16;

/** How much of a plain peer's first frame is read to answer it under its own id. */
const FIRST_FRAME_LIMIT = 64 * 1024;

/** The process-wide masters this process was told of (parseMasterUrls): the addresses pinned. */
const masterAddresses = new Set<string>();

/** Notes `address` (host:port) as a master's: dialling it checks the pinned fingerprints. */
export function noteMasterAddress(address: string): void {
  if (masterAddresses.size < 1000) masterAddresses.add(address);
}

/** A connection's transport once it is ready: TLS or plain, and what the handshake binds to. */
export interface SecuredStream {
  readonly stream: net.Socket;
  /**
   * The server certificate's fingerprint on a TLS connection (RFC 5929's tls-server-end-point):
   * the handshake's proofs cover it, so that a proof made over one TLS connection is worthless
   * over another, and a machine in between that serves a certificate of its own is found out.
   */
  readonly binding: Fingerprint | undefined;
}

/**
 * TLS 1.3 on the wires that leave the machine, for one env or web UI (wick.ssl.*):
 * - What it serves: on a port bound to an address other than loopback, a connection whose first
 *   byte opens a TLS handshake is served TLS with `identity`; a plain one is served only when it
 *   comes from this machine's loopback, and otherwise refused with a message that says why.
 * - What it dials: TLS to every address but loopback. The server's certificate must be one of the
 *   pinned fingerprints when the address is a master's and a fingerprint is pinned; any other
 *   server is proved by the handshake, whose proofs are bound to its certificate.
 */
export class WireSecurity {
  private constructor(
    readonly enabled: boolean,
    readonly loopback: boolean,
    /** What this side serves; undefined: it serves plain only. */
    readonly identity: ServedCertificate | undefined,
    private readonly context: tls.SecureContext | undefined,
    /** The masters' fingerprints this process pins. */
    readonly pins: readonly Fingerprint[],
  ) {}

  /**
   * The settings of a process from its conf and environment. `served` is what a listener serves
   * (the master's cluster certificate); without it, wick.ssl.certFile, or one made now when
   * `bindHost` needs TLS and `makeOwn` allows it.
   */
  static async fromConf(
    conf: WickConf,
    o: {
      bindHost?: string;
      served?: ServedCertificate;
      name?: string;
      advertise?: string[];
      env?: NodeJS.ProcessEnv;
    } = {},
  ): Promise<WireSecurity> {
    const env = o.env ?? process.env;
    const enabled = switchOf(conf, SslConf.enabled, env[SSL_ENABLED_ENV]);
    const loopback = switchOf(conf, SslConf.loopback, env[SSL_LOOPBACK_ENV]);
    const pins = [
      ...parseFingerprints(conf.get(SslConf.fingerprint), SslConf.fingerprint.key),
      ...parseFingerprints(env[TLS_FINGERPRINT_ENV] ?? '', TLS_FINGERPRINT_ENV),
    ];
    const serves = enabled && o.bindHost !== undefined && (loopback || !isLoopbackHost(o.bindHost));
    let identity = o.served;
    if (identity === undefined && serves) {
      identity = readConfiguredCertificate(conf.get(SslConf.certFile), conf.get(SslConf.keyFile));
    }
    if (identity === undefined && serves) {
      // Loaded only by a process that serves TLS: most never make a certificate.
      const { makeSelfSigned } = await import('./selfSigned.js');
      const made = await makeSelfSigned(
        `wick ${o.name ?? 'peer'}`,
        [o.bindHost ?? '', ...(o.advertise ?? [])],
        3650,
      );
      identity = { ...made, fingerprint: fingerprintOfPem(made.certPem), source: 'made at start' };
    }
    return WireSecurity.of(enabled, loopback, serves ? identity : undefined, [...new Set(pins)]);
  }

  /** Plaintext everywhere: for tests of the layers above, and wick.ssl.enabled=false. */
  static plain(): WireSecurity {
    return new WireSecurity(false, false, undefined, undefined, []);
  }

  static of(
    enabled: boolean,
    loopback: boolean,
    identity: ServedCertificate | undefined,
    pins: readonly Fingerprint[],
  ): WireSecurity {
    const context = identity
      ? tls.createSecureContext({
          cert: identity.certPem,
          key: identity.keyPem,
          minVersion: 'TLSv1.3',
        })
      : undefined;
    return new WireSecurity(enabled, loopback, identity, context, pins);
  }

  /** Whether this side serves TLS. */
  get serves(): boolean {
    return this.context !== undefined;
  }

  /** `sha256:…` of what this side serves, or undefined when it serves plain. */
  get fingerprint(): Fingerprint | undefined {
    return this.identity?.fingerprint;
  }

  /** Whether a connection to `host` goes over TLS. */
  encrypts(host: string): boolean {
    return this.enabled && (this.loopback || !isLoopbackHost(host));
  }

  /**
   * Takes an accepted socket through the TLS front: `open` gets the stream to speak on (the
   * socket itself, or TLS over it), or the socket is refused with `refusePlain`'s answer.
   */
  accept(
    socket: net.Socket,
    open: (secured: SecuredStream) => void,
    refusePlain: (socket: net.Socket, firstLine: string) => void,
  ): void {
    const context = this.context;
    if (context === undefined) {
      open({ stream: socket, binding: undefined });
      return;
    }
    socket.once('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE_RECORD) {
        const secure = new tls.TLSSocket(socket, {
          isServer: true,
          secureContext: context,
          requestCert: false,
        });
        secure.once('secure', () => open({ stream: secure, binding: this.fingerprint }));
        secure.once('error', (err) => {
          log.debug(`TLS from ${socket.remoteAddress}:${socket.remotePort} failed: ${err.message}`);
          secure.destroy();
        });
        return;
      }
      if (!this.loopback && isLoopbackHost(socket.remoteAddress ?? '')) {
        socket.resume();
        open({ stream: socket, binding: undefined });
        return;
      }
      readFirstLine(socket, (line) => refusePlain(socket, line));
    });
  }

  /**
   * Dials `host:port`: resolves once the stream is ready to carry the handshake (TLS done, the
   * certificate checked), rejects with an error that says what to do.
   */
  dial(host: string, port: number): { socket: net.Socket; ready: Promise<SecuredStream> } {
    if (!this.encrypts(host)) {
      const socket = net.connect({ host, port });
      return {
        socket,
        ready: new Promise((resolve, reject) => {
          socket.once('connect', () => resolve({ stream: socket, binding: undefined }));
          socket.once('error', reject);
        }),
      };
    }
    const socket = tls.connect({
      host,
      port,
      // A name, not an address, is what SNI carries (RFC 6066); the certificate is pinned or
      // proved by the handshake rather than checked against a CA and a name.
      ...(net.isIP(host) ? {} : { servername: host }),
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
    });
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const ready = new Promise<SecuredStream>((resolve, reject) => {
      socket.once('secureConnect', () => {
        const raw = socket.getPeerCertificate()?.raw;
        if (!raw) {
          reject(new Error(`wick://${address} presented no certificate`));
          return;
        }
        const got = fingerprintOfDer(raw);
        const problem = this.pinProblem(address, got);
        if (problem) {
          reject(new TlsPinError(problem));
          return;
        }
        resolve({ stream: socket, binding: got });
      });
      socket.once('error', (err: Error & { code?: string }) => {
        if (err.code?.startsWith('ERR_SSL') || /SSL|TLS/i.test(err.message)) {
          reject(
            new Error(
              `TLS with wick://${address} failed (${err.message}): a peer with wick.ssl.enabled=false or a version of Wick without TLS answers in plaintext; set wick.ssl.enabled the same on both sides`,
              { cause: err },
            ),
          );
          return;
        }
        reject(err);
      });
    });
    return { socket, ready };
  }

  /** Why the certificate `got` of `address` is refused, or undefined. */
  pinProblem(address: string, got: Fingerprint): string | undefined {
    if (this.pins.length === 0 || !masterAddresses.has(address)) return undefined;
    if (this.pins.includes(got)) return undefined;
    return `The master at wick://${address} presented the certificate ${got}, but this process pins ${this.pins.join(', ')} (wick.ssl.fingerprint or ${TLS_FINGERPRINT_ENV}, from the join line). If the master's certificate was replaced, run \`wick join\` on its machine for the new line; if not, something between here and the master is answering in its place: do not connect.`;
  }
}

/** A setting of the conf, else its value handed down in the environment, else its default. */
function switchOf(
  conf: WickConf,
  entry: typeof SslConf.enabled,
  handed: string | undefined,
): boolean {
  if (conf.contains(entry.key) || handed === undefined) return conf.get(entry);
  return conf.clone().set(entry.key, handed).get(entry);
}

/** A pinned master served another certificate: refused, and not retried as a network blip. */
export class TlsPinError extends Error {}

function readFirstLine(socket: net.Socket, done: (line: string) => void): void {
  let text = '';
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    socket.removeAllListeners('data');
    done(text.split('\n')[0] ?? '');
  };
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    if (text.includes('\n') || text.length >= FIRST_FRAME_LIMIT) finish();
  });
  socket.once('end', finish);
  socket.once('close', finish);
  setTimeout(finish, 5_000).unref();
  socket.resume();
}
