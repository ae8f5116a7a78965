/**
 * A past run's executor logs for the dashboard panel's log page: the files its local cluster
 * left in the work dir the agent keeps (`<clusterDir>/<appId>/<execId>/{stdout,stderr}`, the
 * ones the Applications view lists under the run), read by range as a worker's log API reads
 * them. Nothing is followed: the run ended with its cluster, so its logs are complete. A file
 * that is gone is said to be ("logs removed"), as the tree says it.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogRange } from './protocol.js';
import type { RunStore } from './runStore.js';

/** The most bytes one range read returns (the panel's own bound: webview/protocol.ts). */
export const MAX_PAST_LOG_RANGE = 16 * 1024 * 1024;

/** The file of a past run's executor log, checked part by part (the ids come from the panel). */
export function pastExecutorLog(
  runs: RunStore,
  appId: string,
  execId: unknown,
  stream: unknown,
): string {
  const r = runs.all().find((x) => x.appId === appId);
  if (!r) throw new Error(`No run ${appId} is kept`);
  if (!Number.isInteger(execId) || (execId as number) < 0 || (execId as number) > 2 ** 31)
    throw new Error(`Invalid executor id ${JSON.stringify(execId)}: expected a whole number`);
  if (stream !== 'stdout' && stream !== 'stderr')
    throw new Error(`Invalid stream ${JSON.stringify(stream)}: expected stdout or stderr`);
  return join(r.clusterDir, appId, String(execId), stream);
}

/** Bytes of a past run's log: from `offset`, or its last `length` bytes without one. */
export async function readPastLog(
  path: string,
  describe: string,
  offset: number | undefined,
  length: number,
): Promise<LogRange> {
  if (!Number.isInteger(length) || length < 0 || length > MAX_PAST_LOG_RANGE)
    throw new Error(
      `Invalid length ${JSON.stringify(length)}: expected 0 to ${MAX_PAST_LOG_RANGE} bytes`,
    );
  if (offset !== undefined && (!Number.isInteger(offset) || offset < 0))
    throw new Error(`Invalid offset ${JSON.stringify(offset)}: expected a byte offset`);
  const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new Error(
      err.code === 'ENOENT'
        ? `${describe}: logs removed (${path} is gone: the extension keeps the work dirs of the last few local clusters)`
        : `${describe}: ${err.message}`,
    );
  });
  try {
    const totalSize = (await file.stat()).size;
    const from = Math.min(offset ?? Math.max(0, totalSize - length), totalSize);
    const buf = Buffer.alloc(Math.min(length, totalSize - from));
    const { bytesRead } = await file.read(buf, 0, buf.length, from);
    return { data: buf.subarray(0, bytesRead).toString('base64'), offset: from, totalSize };
  } finally {
    await file.close();
  }
}
