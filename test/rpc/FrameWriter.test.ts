/**
 * FrameWriter over an in-memory stream: one writev per tick, the size limit, spliced frames that
 * read back as the JSON they stand for, and the backlog a slow reader builds up.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { FrameWriter } from '../../backend/rpc/FrameWriter.js';
import { duplexPair, RawEnd } from '../helpers/duplexPair.js';

function pair(maxBytes = 1024) {
  const [ours, theirs] = duplexPair();
  return { writer: new FrameWriter(ours, maxBytes), ours, raw: new RawEnd(theirs) };
}

test('the frames written in one tick leave in one write, in order', async () => {
  const { writer, ours, raw } = pair();
  for (let i = 0; i < 5; i++) writer.write({ jsonrpc: '2.0', method: 'M', params: { i } });
  assert.equal(ours.writableLength > 0, true, 'held until the end of the tick');
  await raw.take();
  assert.deepEqual(raw.chunks.length, 1);
  assert.equal(
    raw.chunks[0],
    [0, 1, 2, 3, 4].map((i) => `{"jsonrpc":"2.0","method":"M","params":{"i":${i}}}\n`).join(''),
  );
});

test('flush sends what the tick wrote so far at once', async () => {
  const { writer, raw } = pair();
  writer.write({ n: 1 });
  writer.flush();
  writer.write({ n: 2 });
  await raw.take((f) => (f as { n?: number }).n === 2);
  assert.deepEqual(raw.chunks, ['{"n":1}\n', '{"n":2}\n']);
});

test('a frame over the limit is not written; its size in bytes is returned', async () => {
  const max = 40;
  const { writer, raw } = pair(max);
  // {"s":"…"} is 8 bytes around the string; é is 2 bytes in UTF-8: 16 of them fill the 40.
  assert.equal(writer.write({ s: 'é'.repeat(16) }), undefined, 'at the limit: written');
  assert.equal(writer.write({ s: 'é'.repeat(17) }), 42);
  assert.equal(writer.write({ s: 'a'.repeat(33) }), 41);
  writer.write({ s: 'after' });
  const f = await raw.take();
  assert.deepEqual(f, { s: 'é'.repeat(16) });
  assert.deepEqual(await raw.take(), { s: 'after' });
  assert.equal(raw.frames.length, 0, 'nothing else was written');
});

test('a spliced frame reads back as the notification with the base64 field in it', async () => {
  const { writer, raw } = pair(4 * 1024 * 1024);
  const base64 = Buffer.alloc(300_000, 7).toString('base64');
  const params = { to: 'Logs', from: 'w:1', message: { type: 'LogChunk', offset: 0 } };
  assert.equal(writer.writeSpliced('LogChunk', params, 'data', base64), undefined);
  const f = await raw.take();
  assert.deepEqual(f, {
    jsonrpc: '2.0',
    method: 'LogChunk',
    params: { ...params, message: { ...params.message, data: base64 } },
  });
});

test('a spliced frame over the limit is not written; its size is returned', async () => {
  const { writer, raw } = pair(1000);
  const params = { message: { type: 'LogChunk' } };
  const bytes = writer.writeSpliced('LogChunk', params, 'data', 'A'.repeat(2000));
  assert.ok(bytes !== undefined && bytes > 2000, String(bytes));
  writer.write({ after: true });
  assert.deepEqual(await raw.take(), { after: true });
});

test('backlog counts what a slow reader has not taken; drained() resolves once it has', async () => {
  const taken: Array<() => void> = [];
  const slow = new Writable({
    highWaterMark: 64,
    write(_chunk, _enc, done) {
      taken.push(done);
    },
  });
  const writer = new FrameWriter(slow, 1024);
  writer.write({ pad: 'x'.repeat(100) });
  writer.flush();
  assert.ok(writer.backlog > 64, `backlog ${writer.backlog}`);
  let drained = false;
  const wait = writer.drained().then(() => {
    drained = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false, 'still behind');
  for (const done of taken.splice(0)) done();
  await wait;
  assert.equal(writer.backlog, 0);
  assert.equal(await writer.drained(), undefined, 'nothing to wait for now');
});

test('drained() resolves when the stream is destroyed instead of draining', async () => {
  const slow = new Writable({ highWaterMark: 8, write() {} });
  const writer = new FrameWriter(slow, 1024);
  writer.write({ pad: 'x'.repeat(50) });
  writer.flush();
  const wait = writer.drained();
  slow.destroy();
  await wait;
});
