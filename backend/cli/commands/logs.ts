import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { LogFollower } from '../../client/LogFollower.js';
import { masterState, withMaster } from '../../client/masterConnection.js';
import { findLogWorker, workerEndpoint } from '../../client/workerLookup.js';
import { bytesOf } from '../../protocol/base64.js';
import { RequestLogRange } from '../../protocol/worker.js';
import type { RpcEndpointRef, RpcEnv } from '../../rpc/index.js';
import { type LogSource, type LogStream, logFields } from '../../shared/logSource.js';
import { defaultMasterUrl } from '../options.js';

/** `wick logs`: an executor's or driver's stdout/stderr, read from its worker, optionally followed. */
export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description("Print an executor's or a driver's log (stdout, or stderr with --stderr)")
    .argument('<id>', 'app-id/exec-id (an executor) or driver-id')
    .option('--master <url>', 'master URL (default $WICK_MASTER or wick://127.0.0.1:7077)')
    .option('-f, --follow', 'keep printing what is written until the process ends')
    .option('--stderr', 'stderr instead of stdout')
    .action(async (id: string, flags: { master?: string; follow?: boolean; stderr?: boolean }) => {
      const stream = flags.stderr ? 'stderr' : 'stdout';
      const source = parseLogId(id);
      await withMaster(flags.master ?? defaultMasterUrl(), async (master, env) => {
        const worker = workerEndpoint(env, findLogWorker(await masterState(master), source));
        const range = await worker.ask(RequestLogRange(logFields(source, stream)));
        const data = bytesOf(range, 'data');
        process.stdout.write(data);
        if (flags.follow) {
          const reason = await followLog(worker, env, source, stream, range.offset + data.length);
          process.stderr.write(`[wick logs] ${reason}\n`);
        }
      });
    });
}

export function parseLogId(id: string): LogSource {
  const exec = /^([^/\s]+)\/(\d+)$/.exec(id);
  if (exec) return { appId: exec[1] as string, execId: Number(exec[2]) };
  if (/^driver-[\w.-]+$/.test(id)) return { driverId: id };
  throw new Error(
    `Invalid log id "${id}": expected app-id/exec-id (e.g. app-20261130120000-0000/0) or a driver id`,
  );
}

/** Prints a log from `offset` as it is written; resolves with why the follow ended. */
export async function followLog(
  worker: RpcEndpointRef,
  env: RpcEnv,
  source: LogSource,
  stream: LogStream,
  offset: number,
): Promise<string> {
  const followId = randomBytes(8).toString('hex');
  const follower = new LogFollower();
  const ref = env.setupEndpoint(`LogPrinter-${followId}`, follower);
  let next = offset;
  let end!: (reason: string) => void;
  const ended = new Promise<string>((r) => {
    end = r;
  });
  const onSigint = () => {
    follower.stop(followId);
    setTimeout(() => process.exit(130), 200).unref();
  };
  process.once('SIGINT', onSigint);
  try {
    await follower.follow(
      worker,
      { source, stream, offset, followId },
      {
        chunk: (c) => {
          const data = bytesOf(c, 'data');
          // Chunks come in order from one follower; skip any overlap with what was printed.
          const skip = Math.max(0, next - c.offset);
          if (skip < data.length) process.stdout.write(data.subarray(skip));
          next = Math.max(next, c.offset + data.length);
        },
        ended: (_totalSize, reason) => end(reason),
      },
    );
    return await ended;
  } finally {
    process.off('SIGINT', onSigint);
    await env.stopEndpoint(ref);
  }
}
