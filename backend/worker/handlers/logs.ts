import { DEFAULT_LOG_BYTES, type LogSource } from '../../logs/logFiles.js';
import { openLogSet, readLogSetRange } from '../../logs/logSet.js';
import { madeLogs } from '../../logs/madeLogs.js';
import type { MessageOf } from '../../protocol/registry.js';
import {
  FollowLog,
  LogChunk,
  LogFollowEnded,
  LogFollowStarted,
  LogRangeResponse,
  RequestLogRange,
  StopFollowLog,
} from '../../protocol/worker.js';
import type { RpcCallContext } from '../../rpc/index.js';
import { LogFollower } from '../logs/LogFollower.js';
import type { Worker } from '../Worker.js';
import type { HandlerRegistry } from './on.js';

/** Clients ↔ Worker: reading and following the stdout and stderr of executors and drivers. */

/** Past this many unsent bytes to a follower, reading pauses until the socket drains. */
const MAX_BACKLOG = 8 * 1024 * 1024;

export function logHandlers(w: Worker, { on }: HandlerRegistry): void {
  on(RequestLogRange, async (msg) => {
    // Over every file of the log: rolled-over ones, then the active one (logSet.ts).
    const range = await readLogSetRange(
      w.workDir,
      source(msg),
      msg.offset,
      msg.length ?? DEFAULT_LOG_BYTES,
      madeLogs,
    );
    return LogRangeResponse({
      data: range.data.toString('base64'),
      offset: range.offset,
      length: range.data.length,
      totalSize: range.totalSize,
    });
  });

  on(FollowLog, (msg, ctx) => follow(w, msg, ctx));

  on(StopFollowLog, (msg) => w.logFollows.stop(msg.followId));
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
  ctx: RpcCallContext<MessageOf<typeof LogFollowStarted>>,
): Promise<MessageOf<typeof LogFollowStarted>> {
  const src = source(m);
  // Chunks go back over the connection that asked: a follow cannot aim them at a third party.
  const ref = ctx.connection
    ? w.rpcEnv.refOver(ctx.connection, m.follower.name)
    : w.rpcEnv.endpointRef(m.follower);
  const set = await openLogSet(w.workDir, src, madeLogs);
  let totalSize: number;
  try {
    totalSize = (await set.read(undefined, 0)).totalSize;
  } catch (err) {
    await set.close();
    throw err;
  }
  const followerRef = ref.toString();
  const done =
    src.driverId !== undefined
      ? () => !w.runners.driver(src.driverId as string)
      : () => !w.runners.executor(`${src.appId}/${src.execId}`);
  // The follower owns the open file from here on, and closes it when it stops.
  const follower: LogFollower = new LogFollower(
    set,
    w.workDir,
    src,
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
        w.logFollows.ended(followerRef, m.followId, follower);
        if (reason === 'process exited' && src.driverId !== undefined)
          reason = driverEnded(w, src.driverId) ?? reason;
        try {
          ref.send(LogFollowEnded({ followId: m.followId, totalSize, reason }));
        } catch {
          // The follower's env is gone; nothing to tell.
        }
      },
      ready: () => w.rpcEnv.backlog(ref).bytes < MAX_BACKLOG,
      drained: () => w.rpcEnv.backlog(ref).drained(),
    },
    done,
  );
  w.logFollows.add(followerRef, m.followId, ctx.senderAddress, follower);
  const started = LogFollowStarted({ followId: m.followId, totalSize });
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
  const r = w.runners.finishedDriver(driverId);
  if (!r) return undefined;
  const code = r.exitCode !== undefined ? ` with exit code ${r.exitCode}` : '';
  return `process exited: driver ${r.state}${code} after ${r.runs} run${r.runs === 1 ? '' : 's'}`;
}
