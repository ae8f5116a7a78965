import { Socket } from 'node:net';
import { RpcConf } from '../conf/rpc.js';
import type { WickConf } from '../conf/WickConf.js';

/** Longer than any secret clusterSecret.ts accepts (1,024 characters), with room for a newline. */
const MAX_BYTES = 2048;
const TIMEOUT_MS = 30_000;

/**
 * `--secret-fd N`: the cluster secret, read once from file descriptor N (a pipe the launcher
 * writes: backend/launcher/daemon/startDaemon.ts) and kept in this process's configuration only,
 * so that it appears in neither its command line nor its environment. Its first line is the
 * secret; clusterSecret.ts checks its length as for any other source.
 */
export async function readSecretFd(fdText: string): Promise<string> {
  const fd = Number(fdText);
  if (!/^\d{1,4}$/.test(fdText) || fd < 3) {
    throw new Error(`--secret-fd is "${fdText}": expected a file descriptor number of 3 or more`);
  }
  const socket = new Socket({ fd, readable: true, writable: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    const done = (err?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(guard);
      socket.destroy();
      if (err) return reject(err);
      const line = Buffer.concat(chunks).toString('utf8').split('\n')[0]?.trim() ?? '';
      if (line === '') reject(new Error(`--secret-fd ${fd}: no secret was written on it`));
      else resolve(line);
    };
    const guard = setTimeout(
      () => done(new Error(`--secret-fd ${fd}: nothing closed it within ${TIMEOUT_MS / 1000} s`)),
      TIMEOUT_MS,
    );
    socket.on('data', (b: Buffer) => {
      size += b.length;
      if (size > MAX_BYTES)
        return done(new Error(`--secret-fd ${fd}: more than ${MAX_BYTES} bytes`));
      chunks.push(b);
      if (b.includes(10)) done();
    });
    socket.on('end', () => done());
    socket.on('error', (err) =>
      done(new Error(`--secret-fd ${fd}: ${err.message}`, { cause: err })),
    );
  });
}

/** Puts the secret read from `--secret-fd` into `conf`, where clusterSecret.ts looks first. */
export async function applySecretFd(conf: WickConf, fdText: string | undefined): Promise<void> {
  if (fdText === undefined) return;
  conf.set(RpcConf.authenticateSecret.key, await readSecretFd(fdText));
}
