/**
 * For tests of the standby executor process (ExecutorPrestarter, Worker.takeStandby): a launch of
 * Wick's own executor command, which a standby serves, and a driver for it that never answers.
 */
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { LaunchSpec } from '../../backend/worker/process/launch.js';
import { repoRoot } from './cli.js';

/** The CLI a worker's standby runs by default. */
export const CLI = join(repoRoot, 'dist', 'wick.cjs');

/** A "driver" that accepts connections and never answers: the executor waits on it, alive. */
export async function silentDriver(t: TestContext): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

/** The launch of executor `id` of app-test, in `dir`/app-test/`id`, on the driver at `driverPort`. */
export function executorSpec(
  dir: string,
  driverPort: number,
  env: Record<string, string> = {},
  id = '0',
): LaunchSpec {
  const cwd = join(dir, 'app-test', id);
  mkdirSync(cwd, { recursive: true });
  return {
    argv: [
      process.execPath,
      CLI,
      'executor',
      '--driver-url',
      `wick://127.0.0.1:${driverPort}/CoarseGrainedScheduler`,
      '--executor-id',
      id,
      '--hostname',
      '127.0.0.1',
      '--cores',
      '1',
      '--app-id',
      'app-test',
    ],
    cwd,
    env: { WICK_EXECUTOR_DIRS: join(dir, 'local'), ...env },
    header: 'Wick Executor Command: "node" "wick.cjs" "executor" …',
  };
}
