import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { RpcError } from '../../backend/protocol/errors.js';
import { setLogSink } from '../../backend/util/log.js';

/**
 * For assert.rejects / assert.throws: an RpcError with this code and, when given, a message
 * equal to `message` (a string) or matching it (a RegExp).
 */
export function rpcError(code: number, message?: string | RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RpcError, `expected an RpcError, got ${err}`);
    assert.equal(err.code, code, `code of "${err.message}"`);
    if (typeof message === 'string') assert.equal(err.message, message);
    else if (message) assert.match(err.message, message);
    return true;
  };
}

/** The log lines of this process while the test runs, kept off its output. */
export function captureLog(t: TestContext): string[] {
  const lines: string[] = [];
  const prev = setLogSink((line) => lines.push(line));
  t.after(() => setLogSink(prev));
  return lines;
}
