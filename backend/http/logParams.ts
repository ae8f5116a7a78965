import type { LogSource, LogStream } from '../shared/logSource.js';

/** Spark's log page default: the last 100 KiB. */
export const DEFAULT_LOG_BYTES = 100 * 1024;
/** The most one request may read. */
export const MAX_LOG_BYTES = 16 * 1024 * 1024;

export interface LogRequest {
  source: LogSource;
  stream: LogStream;
  /** undefined: the last `length` bytes. */
  offset: number | undefined;
  length: number;
}

/**
 * The parameters of Spark's log page (appId + executorId, or driverId; logType; offset;
 * byteLength), checked before anything touches a file. The ids are checked again, with the real
 * path, by resolveLogPath on the worker.
 */
export function parseLogRequest(q: (name: string) => string | undefined): LogRequest | string {
  const appId = q('appId');
  const executorId = q('executorId');
  const driverId = q('driverId');
  const logType = q('logType') ?? 'stdout';
  if (logType !== 'stdout' && logType !== 'stderr') {
    return `Invalid logType ${JSON.stringify(logType)}: expected stdout or stderr`;
  }
  let source: LogSource;
  if (driverId !== undefined && appId === undefined && executorId === undefined) {
    source = { driverId };
  } else if (appId !== undefined && executorId !== undefined && driverId === undefined) {
    if (!/^\d{1,9}$/.test(executorId)) {
      return `Invalid executorId ${JSON.stringify(executorId)}: expected a whole number`;
    }
    source = { appId, execId: Number(executorId) };
  } else {
    return 'Request must specify either application or driver identifiers: appId and executorId, or driverId';
  }
  const offsetText = q('offset');
  let offset: number | undefined;
  if (offsetText !== undefined && offsetText !== '') {
    if (!/^\d{1,15}$/.test(offsetText)) {
      return `Invalid offset ${JSON.stringify(offsetText)}: expected a byte offset, 0 or more`;
    }
    offset = Number(offsetText);
  }
  const lengthText = q('byteLength');
  let length = DEFAULT_LOG_BYTES;
  if (lengthText !== undefined && lengthText !== '') {
    if (!/^\d{1,9}$/.test(lengthText) || Number(lengthText) > MAX_LOG_BYTES) {
      return `Invalid byteLength ${JSON.stringify(lengthText)}: expected 0 to ${MAX_LOG_BYTES}`;
    }
    length = Number(lengthText);
  }
  return { source, stream: logType, offset, length };
}
