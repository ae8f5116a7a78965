import type net from 'node:net';
import { getLogger } from './log.js';

const log = getLogger('Utils');

/**
 * Binds a server (TCP or HTTP) as Spark's startServiceOnPort does: port 0 takes any free port; a
 * busy port is retried upwards up to maxRetries times, with a warning each time, and the final
 * error names every port tried and the setting that allows more.
 */
export async function bindWithRetries(
  server: net.Server,
  name: string,
  host: string,
  port: number,
  maxRetries: number,
): Promise<number> {
  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (err: Error) => {
        server.off('listening', onListening);
        reject(err);
      };
      const onListening = () => {
        server.off('error', onError);
        resolve((server.address() as net.AddressInfo).port);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(p, host);
    });
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`Invalid port ${port} for ${name}: expected 0 (any free port) or 1 to 65535`);
  }
  if (port === 0) return listen(0);
  const last = Math.min(65535, port + maxRetries);
  for (let p = port; p <= last; p++) {
    try {
      return await listen(p);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EADDRINUSE') {
        throw new Error(`Could not bind ${name} to ${host}:${p}: ${(err as Error).message}`);
      }
      if (p < last)
        log.warn(`Service '${name}' could not bind on port ${p}. Attempting port ${p + 1}.`);
    }
  }
  throw new Error(
    `Could not bind ${name} on ${host}: ports ${port} to ${last} are all in use (wick.port.maxRetries=${maxRetries}); free one or choose another port`,
  );
}
