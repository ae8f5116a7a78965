import type { MessageOf } from '../protocol/registry.js';
import type { RequestLogRange } from '../protocol/worker.js';

/**
 * Which log a client means: an executor's (application id and executor id) or a driver's. Pure
 * and type-only where it meets the wire, so that the extension can share it through the agent
 * protocol: the stream's type is the worker protocol's own.
 */
export type LogSource = { appId: string; execId: number } | { driverId: string };

/** stdout or stderr, as the worker's log messages name them. */
export type LogStream = MessageOf<typeof RequestLogRange>['stream'];

/** The fields a worker's log messages (RequestLogRange, FollowLog) take for a source. */
export function logFields(
  source: LogSource,
  stream: LogStream,
): { appId: string; execId: number; stream: LogStream } | { driverId: string; stream: LogStream } {
  return 'driverId' in source
    ? { driverId: source.driverId, stream }
    : { appId: source.appId, execId: source.execId, stream };
}

/** `executor app-…/0` or `driver driver-…`, for messages. */
export function describeLogSource(source: LogSource): string {
  return 'driverId' in source
    ? `driver ${source.driverId}`
    : `executor ${source.appId}/${source.execId}`;
}
