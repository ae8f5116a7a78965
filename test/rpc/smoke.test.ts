import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcEnv } from '../../backend/rpc/index.js';
import { Peer } from '../helpers/peer.js';
import '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';

test('an env in another process answers an ask and records a send', async (t) => {
  const peer = await Peer.start(t, { name: 'peer' });
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'local', clientMode: true });
  t.after(() => env.stop());
  const ref = await env.setupEndpointRef(peer.address, 'Echo');
  assert.deepEqual(await ref.ask({ type: 'Ping', seq: 7 }), { type: 'Pong', seq: 7 });
  ref.send({ type: 'TestRecord', value: 'a' });
  const log = await ref.ask({ type: 'TestGetLog' });
  assert.deepEqual(log.entries, [
    'onStart',
    `onConnected:${env.address}`,
    `record:a from ${env.address}`,
  ]);
});
