import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { validateMessage } from '../../backend/protocol/registry.js';
import { LogChunk } from '../../backend/protocol/worker.js';
import { classifyFrame } from '../../backend/rpc/frames.js';
import {
  parseSplicedFrame,
  SPLICE_MIN_CHARS,
  splicedNotification,
} from '../../backend/rpc/splicedFrames.js';
import { testProtocol } from '../helpers/protocol.js';

/**
 * Spliced frames: what is written is exactly the JSON of the notification, and what is parsed
 * without JSON.parse scanning the big string equals what JSON.parse gives, or is left to it.
 */

const any = () => true;
const big = (n = SPLICE_MIN_CHARS) => randomBytes(n).toString('base64');

function envelope(message: object, from = '127.0.0.1:7078') {
  return { to: 'Follower1', from, message };
}

function parsedLine(frame: Buffer): unknown {
  assert.equal(frame[frame.length - 1], 0x0a, 'one line, newline-terminated');
  assert.equal(frame.indexOf(0x0a), frame.length - 1, 'no newline inside');
  return JSON.parse(frame.toString('utf8', 0, frame.length - 1));
}

test('a spliced notification is the JSON of the notification, whatever text the envelope holds', () => {
  for (const followId of ['f-1', 'suivi-é-日本-🙂', 'quote " back \\ nl \n tab \t']) {
    const data = big(3000);
    const message = { type: 'LogChunk', followId, offset: 12 };
    const frame = splicedNotification('LogChunk', envelope(message), 'data', data);
    assert.deepEqual(parsedLine(frame), {
      jsonrpc: '2.0',
      method: 'LogChunk',
      params: envelope({ ...message, data }),
    });
  }
});

test('parsing a large spliced frame gives what JSON.parse gives', () => {
  const data = big();
  const message = { type: 'LogChunk', followId: 'f-é', offset: 5 };
  const frame = splicedNotification('LogChunk', envelope(message), 'data', data);
  const text = frame.toString('utf8', 0, frame.length - 1);
  const fields: string[] = [];
  const parsed = parseSplicedFrame(text, (method, field) => {
    fields.push(`${method}.${field}`);
    return true;
  });
  assert.deepEqual(parsed, JSON.parse(text));
  assert.deepEqual(fields, ['LogChunk.data']);
  // The same from another writer's JSON: spaces, a different order before the last field.
  const spaced = `{ "params" : { "from": "x:1", "to": "F", "message" : { "offset": 5, "type": "LogChunk", "followId": "f", "data" : "${data}" } }, "method": "LogChunk", "jsonrpc": "2.0" }`;
  assert.equal(parseSplicedFrame(spaced, any), undefined, 'params not last: JSON.parse does it');
  const reordered = `{"method":"LogChunk","jsonrpc":"2.0","params":{"from":"x:1","to":"F","message":{"offset":5,"type":"LogChunk","followId":"f","data" : "${data}"} } }\r\n`;
  assert.deepEqual(parseSplicedFrame(reordered, any), JSON.parse(reordered));
});

test('frames it cannot vouch for are left to JSON.parse', () => {
  const data = big();
  const frameOf = (message: object) =>
    JSON.stringify({ jsonrpc: '2.0', method: 'LogChunk', params: envelope(message) });
  const cases: [string, string][] = [
    ['small', frameOf({ type: 'LogChunk', data: 'QUJD' })],
    ['not accepted', frameOf({ type: 'LogChunk', note: data })],
    ['an escape inside', frameOf({ type: 'LogChunk', data: `${data}\n${data}` })],
    ['not the last field', frameOf({ type: 'LogChunk', data, offset: 1 })],
    ['a number last', frameOf({ type: 'LogChunk', offset: data.length })],
    ['cut short', frameOf({ type: 'LogChunk', data }).slice(0, -1)],
    ['a string in an array', frameOf({ type: 'LogChunk', data: [data] })],
    ['no message', JSON.stringify({ jsonrpc: '2.0', method: 'X', params: { a: { data } } })],
  ];
  for (const [why, text] of cases) {
    const accepts = (_m: string, field: string) => field === 'data';
    assert.equal(parseSplicedFrame(text, accepts), undefined, why);
  }
  // A key given twice: JSON keeps the last value, and so does the splice.
  const twice = frameOf({ type: 'LogChunk', data: 'QUJD', followId: '' }).replace(
    /}}}$/,
    `,"data":"${data}"}}}`,
  );
  assert.deepEqual(parseSplicedFrame(twice, any), JSON.parse(twice));
  // An integer-like key after `message` is listed first by Object.keys: the string cut out is
  // not message's, whatever Object.keys says, so JSON.parse decides.
  const indexKey = `{"jsonrpc":"2.0","method":"LogChunk","params":{"to":"F","from":"x:1","message":{"type":"LogChunk","data":""},"7":{"data":"${data}"}}}`;
  assert.equal(parseSplicedFrame(indexKey, any), undefined);
  // A quote escaped just before the cut-out string: the splice fails to parse, JSON.parse decides.
  const escaped = frameOf({ type: 'LogChunk', data: `x"${data}` });
  assert.equal(parseSplicedFrame(escaped, any), undefined);
});

test('whatever it parses, JSON.parse parses the same (random frames around the shape)', () => {
  const pieces = fc.constantFrom(
    '{',
    '}',
    '"',
    '\\',
    ':',
    ',',
    ' ',
    '"data"',
    '"message":{',
    '"params":{',
    '[',
    ']',
    '1',
  );
  const data = big(SPLICE_MIN_CHARS / 2);
  fc.assert(
    fc.property(fc.array(pieces, { maxLength: 12 }), fc.array(pieces, { maxLength: 6 }), (a, b) => {
      const text = `{"jsonrpc":"2.0","method":"LogChunk","params":{"to":"F","message":{${a.join('')}"data":"${b.join('')}${data}"}}}`;
      const spliced = parseSplicedFrame(text, any);
      if (spliced === undefined) return;
      assert.deepEqual(spliced, JSON.parse(text));
    }),
    { numRuns: 300 },
  );
});

test('classifyFrame takes the splice for a base64 field, and validation still refuses bad bytes', () => {
  const data = big();
  const frame = splicedNotification(
    'LogChunk',
    envelope({ type: 'LogChunk', followId: 'f', offset: 0 }),
    'data',
    data,
  );
  const text = frame.toString('latin1', 0, frame.length - 1);
  const f = classifyFrame(text, 'peer', testProtocol);
  assert.equal(f.kind, 'request');
  const message = (f as { request: { params: { message: unknown } } }).request.params.message;
  assert.equal(validateMessage(LogChunk, message), undefined);
  assert.equal((message as { data: string }).data, data);

  // A control character in the string: JSON.parse refuses the frame; the splice lets it through
  // to validation, which refuses the message as not base64.
  const withControl = text.replace(/"data":"(.{10})/, '"data":"$1\u0001');
  assert.throws(() => JSON.parse(withControl));
  const g = classifyFrame(withControl, 'peer', testProtocol);
  assert.equal(g.kind, 'request');
  const bad = (g as { request: { params: { message: unknown } } }).request.params.message;
  assert.match(validateMessage(LogChunk, bad) ?? '', /field \/data expected standard base64/);

  // A field that is not base64 gets no splice: JSON.parse refuses the control character.
  const other = `{"jsonrpc":"2.0","method":"LogFollowEnded","params":{"to":"F","from":"a:1","message":{"type":"LogFollowEnded","followId":"f","totalSize":0,"reason":"${data.slice(0, 10)}\u0001${data}"}}}`;
  const h = classifyFrame(other, 'peer', testProtocol);
  assert.equal(h.kind, 'bad');
  assert.equal((h as { code: number }).code, RpcErrorCode.ParseError);
});
