import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { bytesOf } from '../../protocol/base64.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import {
  FollowLog,
  type LogChunk,
  type LogFollowEnded,
  RequestLogRange,
  StopFollowLog,
} from '../../protocol/worker.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcEnv,
  type RpcSenderContext,
  unsupported,
} from '../../rpc/index.js';
import { masterState, withMaster } from '../masterClient.js';
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
        const worker = await findWorker(master, env, source);
        const range = await worker.ask(RequestLogRange({ ...source, stream }));
        const data = bytesOf(range, 'data');
        process.stdout.write(data);
        if (flags.follow) {
          const reason = await followLog(
            worker,
            env,
            { ...source, stream },
            range.offset + data.length,
          );
          process.stderr.write(`[wick logs] ${reason}\n`);
        }
      });
    });
}

export type Source = { appId: string; execId: number } | { driverId: string };

export function parseLogId(id: string): Source {
  const exec = /^([^/\s]+)\/(\d+)$/.exec(id);
  if (exec) return { appId: exec[1] as string, execId: Number(exec[2]) };
  if (/^driver-[\w.-]+$/.test(id)) return { driverId: id };
  throw new Error(
    `Invalid log id "${id}": expected app-id/exec-id (e.g. app-20261130120000-0000/0) or a driver id`,
  );
}

async function findWorker(
  master: RpcEndpointRef,
  env: RpcEnv,
  source: Source,
): Promise<RpcEndpointRef> {
  const state = await masterState(master);
  let workerId: string | undefined;
  if ('driverId' in source) {
    const d = [...state.activeDrivers, ...state.completedDrivers].find(
      (x) => x.id === source.driverId,
    );
    if (!d) throw new Error(`The master knows no driver ${source.driverId}`);
    workerId = d.workerId;
  } else {
    const app = [...state.activeApps, ...state.completedApps].find((a) => a.id === source.appId);
    if (!app) throw new Error(`The master knows no application ${source.appId}`);
    const e = [...app.executors, ...app.removedExecutors].find((x) => x.id === source.execId);
    if (!e) throw new Error(`Application ${source.appId} has no executor ${source.execId}`);
    workerId = e.workerId;
  }
  const ref = workerOf(state, workerId, env);
  if (!ref)
    throw new Error(
      `The worker that ran it (${workerId ?? 'none'}) is no longer known to the master`,
    );
  return ref;
}

/** The Worker endpoint of a worker the master knows, by id. */
export function workerOf(
  state: { workers: { id: string; host: string; port: number }[] },
  workerId: string | undefined,
  env: RpcEnv,
): RpcEndpointRef | undefined {
  const w = state.workers.find((x) => x.id === workerId);
  return w ? env.endpointRef({ address: `${w.host}:${w.port}`, name: 'Worker' }) : undefined;
}

class LogPrinter extends RpcEndpoint {
  next: number;
  ended!: Promise<string>;
  private end!: (reason: string) => void;

  constructor(
    readonly followId: string,
    from: number,
  ) {
    super();
    this.next = from;
    this.ended = new Promise((r) => {
      this.end = r;
    });
  }

  override receive(message: WireMessage, sender: RpcSenderContext): void {
    if (message.type === 'LogChunk') {
      const c = message as MessageOf<typeof LogChunk>;
      if (c.followId !== this.followId) return;
      const data = bytesOf(c, 'data');
      // Chunks come in order from one follower; skip any overlap with what was already printed.
      const skip = Math.max(0, this.next - c.offset);
      if (skip < data.length) process.stdout.write(data.subarray(skip));
      this.next = Math.max(this.next, c.offset + data.length);
      return;
    }
    if (message.type === 'LogFollowEnded') {
      const e = message as MessageOf<typeof LogFollowEnded>;
      if (e.followId === this.followId) this.end(e.reason);
      return;
    }
    throw unsupported(message, sender);
  }
}

/** Prints a log from `offset` as it is written; resolves with why the follow ended. */
export async function followLog(
  worker: RpcEndpointRef,
  env: RpcEnv,
  source: Source & { stream: 'stdout' | 'stderr' },
  offset: number,
): Promise<string> {
  const followId = randomBytes(8).toString('hex');
  const printer = new LogPrinter(followId, offset);
  const ref = env.setupEndpoint(`LogPrinter-${followId}`, printer);
  const stop = () => worker.send(StopFollowLog({ followId }));
  const onSigint = () => {
    stop();
    setTimeout(() => process.exit(130), 200).unref();
  };
  process.once('SIGINT', onSigint);
  try {
    await worker.ask(FollowLog({ ...source, followId, offset, follower: ref.toData() }));
    return await printer.ended;
  } finally {
    process.off('SIGINT', onSigint);
    await env.stopEndpoint(ref);
  }
}
