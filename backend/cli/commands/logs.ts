import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { LogFollower } from '../../client/LogFollower.js';
import { LogRouter, logRouterOptions } from '../../client/LogRouter.js';
import { masterState, withMaster } from '../../client/masterConnection.js';
import { loadConf } from '../../conf/load.js';
import { bytesOf } from '../../protocol/base64.js';
import { RequestLogRange } from '../../protocol/worker.js';
import type { RpcEndpointRef, RpcEnv } from '../../rpc/index.js';
import { type LogSource, type LogStream, logFields } from '../../shared/logSource.js';
import { addConfOptions, addTokenOption, masterUrlOf } from '../options.js';
import { listExecutorLogs } from './logList.js';

interface LogsFlags {
  master?: string;
  follow?: boolean;
  stderr?: boolean;
  conf: string[];
  propertiesFile?: string;
}

/**
 * `wick logs`: an executor's or driver's stdout/stderr, read from its worker, optionally followed.
 * A worker this machine cannot reach (a laptop with a tunnel to the master) is read through the
 * master, as with --conf wick.ui.reverseProxy=true always; a line on stderr says so.
 */
export function registerLogs(program: Command): void {
  addTokenOption(
    addConfOptions(
      program
        .command('logs')
        .description(
          "Print an executor's or a driver's log (stdout, or stderr with --stderr), or list an application's executor logs",
        )
        .argument('<id>', 'app-id/exec-id (an executor), driver-id, or app-id (list its logs)')
        .option(
          '--master <url>',
          'master URL (default wick.master, $WICK_MASTER or wick://127.0.0.1:7077)',
        )
        .option('-f, --follow', 'keep printing what is written until the process ends')
        .option('--stderr', 'stderr instead of stdout'),
    ),
  ).action(async (id: string, flags: LogsFlags) => {
    const stream = flags.stderr ? 'stderr' : 'stdout';
    const listed = /^app-[\w.-]+$/.test(id) ? id : undefined;
    const source = listed === undefined ? parseLogId(id) : undefined;
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    await withMaster(
      masterUrlOf(flags.master, conf),
      async (master, env) => {
        const router = new LogRouter(env, logRouterOptions(conf));
        const state = await masterState(master);
        if (source === undefined) {
          const lines = await listExecutorLogs(state, listed as string, router, master);
          process.stdout.write(`${lines.join('\n')}\n`);
          return;
        }
        const route = await router.route(state, source, master);
        if (route.via === 'master') {
          process.stderr.write(
            `[wick logs] through the master at ${master.address}: ${route.reason}\n`,
          );
        }
        const range = await route.ref.ask(RequestLogRange(logFields(source, stream)));
        const data = bytesOf(range, 'data');
        process.stdout.write(data);
        if (flags.follow) {
          const reason = await followLog(
            route.ref,
            env,
            source,
            stream,
            range.offset + data.length,
          );
          process.stderr.write(`[wick logs] ${reason}\n`);
        }
      },
      conf,
    );
  });
}

export function parseLogId(id: string): LogSource {
  const exec = /^([^/\s]+)\/(\d+)$/.exec(id);
  if (exec) return { appId: exec[1] as string, execId: Number(exec[2]) };
  if (/^driver-[\w.-]+$/.test(id)) return { driverId: id };
  throw new Error(
    `Invalid log id "${id}": expected app-id/exec-id (e.g. app-20261130120000-0000/0), a driver id, or an app id`,
  );
}

/**
 * Prints a log from `offset` as it is written; resolves with why the follow ended. `from` is the
 * worker that holds it or the master's LogRelay (LogRouter's choice).
 */
export async function followLog(
  from: RpcEndpointRef,
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
      from,
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
