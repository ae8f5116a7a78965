import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RpcConf } from '../conf/rpc.js';
import type { WickConf } from '../conf/WickConf.js';
import { defaultSecretFile, resolveClusterAuth } from './clusterSecret.js';
import { type Credential, parseToken } from './credentials.js';

/** WICK_TOKEN_FILE: the token file, as wick.authenticate.token.file. */
export const TOKEN_FILE_ENV = 'WICK_TOKEN_FILE';

/** `$XDG_CONFIG_HOME/wick/token`, beside the default secret file. */
export function defaultTokenFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(defaultSecretFile(env)), 'token');
}

/**
 * What a client (CLI, agent) proves when it dials, in order: a token named for it
 * (wick.authenticate.token.file, then WICK_TOKEN_FILE) — a user who names one means it, even on
 * the master's machine; then the cluster secret, found the one way (clusterSecret.ts), so that
 * the operator on the master's machine needs nothing set up; then the default token file; else
 * nothing (open). `secret` is set when the credential is the cluster secret.
 */
export function resolveClientCredential(
  conf: WickConf,
  env: NodeJS.ProcessEnv = process.env,
): { credential: Credential | undefined; secret?: string; source?: string } {
  const named = conf.get(RpcConf.tokenFile) || env[TOKEN_FILE_ENV];
  if (named) {
    const text = readTokenFile(named);
    if (text === undefined) {
      throw new Error(
        `The token file ${named} does not exist: save the line \`wick token create\` printed there (readable by you alone)`,
      );
    }
    return { credential: parseToken(text, `The token file ${named}`), source: named };
  }
  const found = resolveClusterAuth(conf, env);
  if (found.mode === 'secret') {
    return {
      credential: { kind: 'cluster', key: found.secret },
      secret: found.secret,
      source: found.source,
    };
  }
  if (found.mode === 'none') {
    const fallback = defaultTokenFile(env);
    const text = readTokenFile(fallback);
    if (text !== undefined) {
      return { credential: parseToken(text, `The token file ${fallback}`), source: fallback };
    }
  }
  return { credential: undefined };
}

/** Its first line; undefined when there is no such file. */
function readTokenFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the token file ${path}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`The token file ${path} is not a file`);
    if (st.size > 4096)
      throw new Error(`The token file ${path} has ${st.size} bytes; a token has under 100`);
    return (readFileSync(fd, 'utf8').split('\n')[0] ?? '').trim();
  } finally {
    closeSync(fd);
  }
}
