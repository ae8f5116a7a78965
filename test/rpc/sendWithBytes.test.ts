/**
 * RpcEnv.sendWithBytes over a real socket, to a peer that reads with a plain JSON parser: every
 * frame is ordinary JSON whose base64 decodes to the bytes sent, even while the peer stops
 * reading and megabytes wait in the socket (the frames' buffers are reused only once written),
 * and when the sender reuses its own buffer right after each call.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcEnv } from '../../backend/rpc/index.js';
import { RawClient } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

const MiB = 1024 * 1024;

function fill(buf: Buffer, seed: number): Buffer {
  for (let i = 0; i < buf.length; i += 4) buf.writeUInt32LE((seed * 2654435761 + i) >>> 0, i);
  return buf;
}

test('chunks sent while the peer is not reading arrive intact, as plain JSON', async (t) => {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'bytesSender', port: 0 });
  t.after(() => env.stop());
  const raw = await RawClient.connect(env.address, t);
  await raw.hello('client-slow-reader');
  const ref = env.endpointRef({ address: 'client-slow-reader', name: 'Follower' });

  raw.socket.pause();
  const source = Buffer.alloc(MiB);
  const count = 24;
  for (let k = 0; k < count; k++) {
    // One buffer for every chunk, as LogFollower does: the env must not keep a view of it.
    fill(source, k);
    env.sendWithBytes(ref, { type: 'LogChunk', followId: 'f', offset: k * MiB }, 'data', source);
    await new Promise((r) => setImmediate(r));
  }
  assert.ok(env.backlog('client-slow-reader').bytes > 4 * MiB, 'the peer is behind');
  raw.socket.resume();

  for (let k = 0; k < count; k++) {
    const f = await raw.take((x) => x.method === 'LogChunk');
    assert.equal(f.unparsed, undefined, 'JSON');
    const params = f.params as { to: string; message: { offset: number; data: string } };
    assert.equal(params.to, 'Follower');
    assert.equal(params.message.offset, k * MiB);
    const got = Buffer.from(params.message.data, 'base64');
    assert.ok(got.equals(fill(Buffer.alloc(MiB), k)), `chunk ${k} intact`);
  }
});
