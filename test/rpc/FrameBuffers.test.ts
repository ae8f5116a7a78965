import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameBuffers } from '../../backend/rpc/FrameBuffers.js';
import { splicedNotification } from '../../backend/rpc/splicedFrames.js';

/** The pool behind spliced frames: what is given back is taken again, within its limits. */

test('a buffer given back is taken again; a new one is made while all are out', () => {
  const pool = new FrameBuffers(2, 1000, 5000);
  const a = pool.take(10);
  assert.equal(a.length, 1000, 'made at least minBytes large');
  const b = pool.take(1200);
  assert.equal(b.length, 1200);
  assert.notEqual(a, b);
  pool.give(a);
  assert.equal(pool.take(900), a);
  pool.give(a);
  assert.notEqual(pool.take(1100), a, 'too small for that frame');
});

test('at most `keep` idle buffers, and none larger than maxBytes', () => {
  const pool = new FrameBuffers(2, 1000, 5000);
  const out = [pool.take(1), pool.take(1), pool.take(1)];
  for (const b of out) pool.give(b);
  assert.equal(pool.idle, 2);
  const huge = pool.take(6000);
  assert.equal(huge.length, 6000);
  pool.give(huge);
  assert.equal(pool.idle, 2);
  assert.notEqual(pool.take(5500), huge);
});

test('a frame written into a used buffer holds only its own bytes', () => {
  const pool = new FrameBuffers(1, 4096, 8192);
  const dirty = pool.take(1);
  dirty.fill(0x7b);
  pool.give(dirty);
  const frame = splicedNotification(
    'LogChunk',
    { message: { type: 'LogChunk' } },
    'data',
    'QUJD',
    (n) => pool.take(n),
  );
  assert.equal(frame.buffer, dirty.buffer, 'the pooled memory was used');
  assert.equal(
    frame.toString(),
    '{"jsonrpc":"2.0","method":"LogChunk","params":{"message":{"type":"LogChunk","data":"QUJD"}}}\n',
  );
});
