import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { RpcConf } from '../conf/rpc.js';
import type { WickConf } from '../conf/WickConf.js';

/**
 * How this process learns the cluster secret — the same everywhere (master, worker, CLI, agent,
 * web UI), so that "authentication is on" has one meaning: a secret was found. In order:
 * `wick.authenticate.secret` (from --conf or a properties file), the file named by
 * `wick.authenticate.secret.file`, WICK_AUTH_SECRET, the default secret file. Only an explicit
 * `wick.authenticate=false` runs open. Drivers and executors started by Wick never look here:
 * they get a key of their own (credentials.ts).
 */
export type ClusterAuth =
  | { readonly mode: 'open' }
  | { readonly mode: 'secret'; readonly secret: string; readonly source: string }
  /** No secret anywhere: a master makes one (ensureClusterSecret); anyone else has none. */
  | { readonly mode: 'none'; readonly file: string };

/** Secrets shorter than this are refused: 128 bits is what the generated one has. */
const MIN_SECRET_LENGTH = 16;

export function defaultSecretFile(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME || join(os.homedir(), '.config');
  return join(config, 'wick', 'cluster-secret');
}

/** Where a secret put into a conf by moveSecretIntoConf came from, for the messages that name it. */
const movedFrom = new WeakMap<WickConf, string>();

/**
 * Puts a secret found elsewhere (a daemon's WICK_AUTH_SECRET) into `conf`, where it is looked for
 * first, remembering where it came from: messages keep naming that.
 */
export function moveSecretIntoConf(conf: WickConf, value: string, from: string): void {
  conf.set(RpcConf.authenticateSecret.key, value);
  movedFrom.set(conf, from);
}

export function resolveClusterAuth(
  conf: WickConf,
  env: NodeJS.ProcessEnv = process.env,
): ClusterAuth {
  if (conf.contains(RpcConf.authenticate.key) && !conf.get(RpcConf.authenticate)) {
    return { mode: 'open' };
  }
  const inConf = conf.get(RpcConf.authenticateSecret);
  if (inConf) return secret(inConf, movedFrom.get(conf) ?? RpcConf.authenticateSecret.key);
  const file = conf.get(RpcConf.authenticateSecretFile);
  if (file) {
    const text = readSecretFile(file);
    if (text === undefined) {
      throw new Error(
        `${RpcConf.authenticateSecretFile.key} is ${file}, which does not exist: create it with the secret (the master prints it on first start, or run \`wick secret\` where the master runs)`,
      );
    }
    return secret(text, file);
  }
  if (env.WICK_AUTH_SECRET) return secret(env.WICK_AUTH_SECRET, 'WICK_AUTH_SECRET');
  const fallback = defaultSecretFile(env);
  const text = readSecretFile(fallback);
  if (text !== undefined) return secret(text, fallback);
  if (conf.contains(RpcConf.authenticate.key)) {
    throw new Error(
      `wick.authenticate is true but no secret is set: set ${RpcConf.authenticateSecret.key}, ${RpcConf.authenticateSecretFile.key} or the WICK_AUTH_SECRET environment variable`,
    );
  }
  return { mode: 'none', file: fallback };
}

/**
 * The master's: the secret that was found, or one made now and kept in the default secret file
 * (readable by this user only) so that a restart, the workers and the tools of this machine find
 * it — as a k3s server keeps its join token.
 */
export function ensureClusterSecret(auth: ClusterAuth): ClusterAuth & { generated?: boolean } {
  if (auth.mode !== 'none') return auth;
  mkdirSync(dirname(auth.file), { recursive: true, mode: 0o700 });
  const made = randomBytes(24).toString('base64url');
  try {
    const fd = openSync(
      auth.file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      0o600,
    );
    try {
      writeSync(fd, `${made}\n`);
    } finally {
      closeSync(fd);
    }
    return { mode: 'secret', secret: made, source: auth.file, generated: true };
  } catch (err) {
    // Another master of this machine made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const text = readSecretFile(auth.file);
    if (text === undefined) throw err;
    return secret(text, auth.file);
  }
}

function secret(text: string, source: string): ClusterAuth {
  const value = text.trim();
  if (value.length < MIN_SECRET_LENGTH) {
    throw new Error(
      `The cluster secret from ${source} has ${value.length} characters; it needs at least ${MIN_SECRET_LENGTH} (a generated one: \`openssl rand -base64 24\`)`,
    );
  }
  if (value.length > 1024) {
    throw new Error(`The cluster secret from ${source} is longer than 1024 characters`);
  }
  return { mode: 'secret', secret: value, source };
}

/** Its first line; undefined when there is no such file. (Links are followed: a Kubernetes secret volume is one.) */
function readSecretFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the cluster secret file ${path}: ${(err as Error).message}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`The cluster secret file ${path} is not a file`);
    return (readFileSync(fd, 'utf8').split('\n')[0] ?? '').trim();
  } finally {
    closeSync(fd);
  }
}

/**
 * What an application is handed of its submitter's settings: everything but how to find the
 * cluster secret, which stays with `wick submit` (and would otherwise show in the driver's
 * command, the master's state and every executor's AppConfig).
 */
export function withoutSecrets(conf: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(conf).filter(([k]) => !k.startsWith('wick.authenticate.secret')),
  );
}
