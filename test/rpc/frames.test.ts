import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { classifyFrame } from '../../backend/rpc/frames.js';
import { testProtocol } from '../helpers/protocol.js';

const bad = (text: string) => {
  const f = classifyFrame(text, 'peer-x', testProtocol);
  assert.equal(f.kind, 'bad', `${text} should be refused`);
  return f as Extract<typeof f, { kind: 'bad' }>;
};

test('requests, notifications and responses are told apart', () => {
  assert.equal(
    classifyFrame('{"jsonrpc":"2.0","id":1,"method":"Ping","params":{}}', 'p', testProtocol).kind,
    'request',
  );
  assert.equal(
    classifyFrame('{"jsonrpc":"2.0","method":"Ping"}', 'p', testProtocol).kind,
    'request',
  );
  assert.equal(
    classifyFrame('{"jsonrpc":"2.0","id":"a","result":{"type":"Pong"}}', 'p', testProtocol).kind,
    'response',
  );
  assert.equal(
    classifyFrame(
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"x"}}',
      'p',
      testProtocol,
    ).kind,
    'response',
  );
});

test('each malformed frame gets the matching JSON-RPC error, under its id when the id is sound', () => {
  assert.equal(bad('{"jsonrpc":').code, RpcErrorCode.ParseError);
  assert.equal(bad('42').code, RpcErrorCode.InvalidRequest);
  assert.match(bad('[{"jsonrpc":"2.0","method":"Ping"}]').message, /batches are not supported/);
  const wrongVersion = bad('{"jsonrpc":"1.0","id":7,"method":"Ping"}');
  assert.deepEqual([wrongVersion.code, wrongVersion.id], [RpcErrorCode.InvalidRequest, 7]);
  assert.equal(bad('{"jsonrpc":"2.0","id":{},"method":"Ping"}').id, null);
  assert.equal(bad('{"jsonrpc":"2.0","id":1,"method":5}').code, RpcErrorCode.InvalidRequest);
  assert.equal(
    bad('{"jsonrpc":"2.0","id":1,"method":"Ping","params":"x"}').code,
    RpcErrorCode.InvalidRequest,
  );
  assert.match(bad('{"jsonrpc":"2.0","id":1}').message, /neither a request/);
});

test('a malformed error reply becomes an error that names the peer; an empty reply becomes null', () => {
  const f = classifyFrame('{"jsonrpc":"2.0","id":3,"error":"nope"}', 'peer-x', testProtocol);
  assert.equal(f.kind, 'response');
  const r = (f as Extract<typeof f, { kind: 'response' }>).response;
  assert.equal(r.error?.code, RpcErrorCode.InvalidRequest);
  assert.match(r.error?.message ?? '', /Malformed error reply from peer-x/);
  const empty = classifyFrame('{"jsonrpc":"2.0","id":4,"result":null}', 'p', testProtocol);
  assert.equal((empty as Extract<typeof empty, { kind: 'response' }>).response.result, null);
});
