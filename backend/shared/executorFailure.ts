/**
 * Words for an executor that failed, shared by the driver's log, the master's record of the
 * application, `wick status`, the dashboard and the extension, so that all of them say the same.
 */

/**
 * Errors that mean a connection to an address did not get through: Node's codes, and Wick's own
 * words for ECONNREFUSED (backend/rpc/Connections.ts).
 */
const UNREACHABLE = /\b(ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)\b|connection refused/;

export const DRIVER_HOST_HINT = ' — is wick.driver.host reachable from the worker hosts?';

/**
 * `message` with the hint after the last line that shows a connection failure, if one does: an
 * executor that cannot connect fails on its driver's address, which wick.driver.host sets.
 */
export function withDriverHostHint(message: string): string {
  if (message.includes(DRIVER_HOST_HINT)) return message;
  const lines = message.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (UNREACHABLE.test(lines[i] as string)) {
      lines[i] += DRIVER_HOST_HINT;
      return lines.join('\n');
    }
  }
  return message;
}

/** The first line of a message (an executor's state keeps it; its application keeps the rest). */
export function firstLine(message: string): string {
  const nl = message.indexOf('\n');
  return nl < 0 ? message : message.slice(0, nl);
}
