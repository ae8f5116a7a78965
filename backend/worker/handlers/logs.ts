import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import {
  type FollowLog,
  LogChunk,
  LogFollowEnded,
  LogFollowStarted,
  LogRangeResponse,
  type RequestLogRange,
  type StopFollowLog,
} from '../../protocol/worker.js';
import type { RpcCallContext } from '../../rpc/index.js';
import { LogFollower } from '../logs/LogFollower.js';
import {
  DEFAULT_LOG_BYTES,
  type LogSource,
  readLogRange,
  resolveLogPath,
} from '../logs/logFiles.js';
import type { Worker } from '../Worker.js';

/** Clients ↔ Worker: reading and following the stdout and stderr of executors and drivers. */

/** Past this many unsent bytes to a follower, reading pauses until the socket drains. */
const MAX_BACKLOG = 8 * 1024 * 1024;

const followers = new WeakMap<Worker, Map<string, { follower: LogFollower; address: string }>>();

function table(w: Worker): Map<string, { follower: LogFollower; address: string }> {
  let t = followers.get(w);
  if (!t) {
    t = new Map();
    followers.set(w, t);
  }
  return t;
}

export async function reply(
  w: Worker,
  msg: WireMessage,
  ctx: RpcCallContext,
): Promise<WireMessage | undefined> {
  switch (msg.type) {
    case 'RequestLogRange': {
      const m = msg as MessageOf<typeof RequestLogRange>;
      const path = await resolveLogPath(w.workDir, source(m));
      const range = await readLogRange(path, m.offset, m.length ?? DEFAULT_LOG_BYTES);
      return LogRangeResponse({
        data: range.data.toString('base64'),
        offset: range.offset,
        length: range.data.length,
        totalSize: range.totalSize,
      });
    }
    case 'FollowLog':
      return follow(w, msg as MessageOf<typeof FollowLog>, ctx);
    default:
      return undefined;
  }
}

export function receive(w: Worker, msg: WireMessage): boolean {
  if (msg.type !== 'StopFollowLog') return false;
  const { followId } = msg as MessageOf<typeof StopFollowLog>;
  for (const [key, f] of table(w)) {
    if (key.endsWith(`\n${followId}`)) f.follower.stop('stopped by the follower');
  }
  return true;
}

/** An executor or driver changed state: followers re-check whether their process is done. */
export function sourceChanged(w: Worker): void {
  for (const f of table(w).values()) f.follower.poke();
}

export function dropAddress(w: Worker, address: string): void {
  for (const f of table(w).values())
    if (f.address === address) f.follower.stop('follower disconnected');
}

export function stopAll(w: Worker): void {
  for (const f of table(w).values()) f.follower.stop('worker stopped');
}

function source(m: {
  appId?: string;
  execId?: number;
  driverId?: string;
  stream: 'stdout' | 'stderr';
}): LogSource {
  return { appId: m.appId, execId: m.execId, driverId: m.driverId, stream: m.stream };
}

async function follow(
  w: Worker,
  m: MessageOf<typeof FollowLog>,
  ctx: RpcCallContext,
): Promise<WireMessage> {
  const src = source(m);
  const path = await resolveLogPath(w.workDir, src);
  const ref = w.rpcEnv.endpointRef(m.follower);
  const key = `${ref}\n${m.followId}`;
  table(w).get(key)?.follower.stop('replaced by a new follow with the same id');
  const done =
    src.driverId !== undefined
      ? () => !w.drivers.has(src.driverId as string)
      : () => !w.executors.has(`${src.appId}/${src.execId}`);
  const follower = new LogFollower(
    path,
    m.offset,
    {
      chunk: (offset, data) => {
        const chunk: Omit<MessageOf<typeof LogChunk>, 'data'> = {
          type: LogChunk.type,
          followId: m.followId,
          offset,
        };
        w.rpcEnv.sendWithBytes(ref, chunk, 'data', data);
      },
      end: (totalSize, reason) => {
        table(w).delete(key);
        if (reason === 'process exited' && src.driverId !== undefined)
          reason = driverEnded(w, src.driverId) ?? reason;
        try {
          ref.send(LogFollowEnded({ followId: m.followId, totalSize, reason }));
        } catch {
          // The follower's env is gone; nothing to tell.
        }
      },
      ready: () => w.rpcEnv.backlog(ref.address).bytes < MAX_BACKLOG,
      drained: () => w.rpcEnv.backlog(ref.address).drained(),
    },
    done,
  );
  table(w).set(key, { follower, address: ctx.senderAddress });
  const started = LogFollowStarted({
    followId: m.followId,
    totalSize: (await readLogRange(path, 0, 0)).totalSize,
  });
  // Reply first, so that the follower knows the follow started before the first chunk arrives.
  ctx.reply(started);
  await follower.start();
  return started;
}

/**
 * How a driver ended, for the end of its log: with supervision one file holds every run, so
 * "process exited" alone would not say whether this was the last of them.
 */
function driverEnded(w: Worker, driverId: string): string | undefined {
  const r = w.finishedDrivers.get(driverId);
  if (!r) return undefined;
  const code = r.exitCode !== undefined ? ` with exit code ${r.exitCode}` : '';
  return `process exited: driver ${r.state}${code} after ${r.runs} run${r.runs === 1 ? '' : 's'}`;
}
