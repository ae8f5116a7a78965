import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { bytesOf, decodeBase64 } from '../../backend/protocol/base64.js';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { validateMessage } from '../../backend/protocol/registry.js';
import { LogChunk, LogRangeResponse } from '../../backend/protocol/worker.js';

/** Base64 fields: decoded strictly once on receipt, the bytes handed to whoever asks for them. */

test('any bytes round-trip through standard base64', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (arr) => {
      const bytes = Buffer.from(arr);
      const decoded = decodeBase64(bytes.toString('base64'));
      assert.ok(decoded?.equals(bytes));
    }),
  );
});

test('what is not base64 is refused: a wrong length, a stray character, a misplaced =', () => {
  const good = randomBytes(30).toString('base64');
  for (const bad of [
    good.slice(1),
    `${good.slice(0, 8)}\u0001${good.slice(9)}`,
    `${good.slice(0, 8)}"${good.slice(9)}`,
    `${good.slice(0, 8)} ${good.slice(9)}`,
    `${good.slice(0, 8)}\n${good.slice(9)}`,
    `${good.slice(0, 8)}é${good.slice(9)}`,
    `${good.slice(0, 8)}=${good.slice(9)}`,
    'QQ=Q',
    'Q===',
  ]) {
    assert.equal(decodeBase64(bad), undefined, JSON.stringify(bad));
  }
  // Any one character of a valid string replaced by one outside the alphabet is caught.
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 1, maxLength: 90 }),
      fc.nat(),
      fc.constantFrom('\u0000', '\u001f', '"', '\\', ' ', '.', '~', 'ÿ', '\u2028'),
      (arr, at, c) => {
        const text = Buffer.from(arr).toString('base64');
        const i = at % text.length;
        assert.equal(decodeBase64(text.slice(0, i) + c + text.slice(i + 1)), undefined);
      },
    ),
  );
});

test('a received message with bad base64 fails validation naming the field and the value', () => {
  const def = wickProtocol.get('LogChunk');
  assert.ok(def);
  assert.deepEqual(def.base64, ['data']);
  assert.deepEqual(wickProtocol.get('LogRangeResponse')?.base64, ['data']);
  const problem = validateMessage(
    def,
    LogChunk({ followId: 'f', offset: 0, data: 'QUJD\u0001EVG' }),
  );
  assert.match(
    problem ?? '',
    /^LogChunk: field \/data expected standard base64 .*got "QUJD\\u0001EVG"/,
  );
  assert.equal(
    validateMessage(def, LogChunk({ followId: 'f', offset: 0, data: 'QUJD' })),
    undefined,
  );
});

test('bytesOf hands over the bytes decoded on validation, or decodes a local message', () => {
  const data = randomBytes(1000);
  const received = LogChunk({ followId: 'f', offset: 0, data: data.toString('base64') });
  assert.equal(validateMessage(LogChunk, received), undefined);
  const first = bytesOf(received, 'data');
  assert.ok(first.equals(data));
  assert.equal(bytesOf(received, 'data'), first, 'the same Buffer: decoded once');

  const local = LogRangeResponse({ data: 'aGk=', offset: 0, length: 2, totalSize: 2 });
  assert.equal(bytesOf(local, 'data').toString(), 'hi');

  assert.throws(
    () => bytesOf(LogChunk({ followId: 'f', offset: 0, data: 'not base64!' }), 'data'),
    (err: unknown) =>
      err instanceof RpcError &&
      err.code === RpcErrorCode.InvalidParams &&
      /Field data should be standard base64 .*got "not base64!"/.test(err.message),
  );
});
