/**
 * FrameReader over an in-memory stream: frames however the bytes are cut, the size guard, and a
 * target that changes between two frames of one chunk (what lets a handshake hand over).
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { FrameReader, type FrameTarget } from '../../backend/rpc/FrameReader.js';

class Collect implements FrameTarget {
  readonly frames: string[] = [];
  readonly oversize: Array<[number, string]> = [];
  private wake: (() => void) | undefined;

  onFrame(text: string): void {
    this.frames.push(text);
    this.wake?.();
  }

  onOversize(bytes: number, head: string): void {
    this.oversize.push([bytes, head]);
    this.wake?.();
  }

  /** Resolves once `n` frames and oversize reports have come in all. */
  async until(n: number): Promise<void> {
    while (this.frames.length + this.oversize.length < n) {
      await new Promise<void>((r) => {
        this.wake = r;
      });
    }
  }
}

test('frames cut anywhere by the chunks come out whole and in order', async () => {
  const stream = new PassThrough();
  const target = new Collect();
  new FrameReader(stream, 1024).listen(target);
  const text = '{"a":1}\n{"b":"é"}\r\n\n{"c":3}\n';
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += 3) stream.write(bytes.subarray(i, i + 3));
  await target.until(3);
  assert.deepEqual(target.frames, ['{"a":1}', '{"b":"é"}', '{"c":3}']);
});

test('a frame over the limit is reported with its size and head, and the next one is read', async () => {
  const stream = new PassThrough();
  const target = new Collect();
  new FrameReader(stream, 16).listen(target);
  const big = `{"id":7,"pad":"${'x'.repeat(40)}"}`;
  stream.write(`${big}\n{"ok":1}\n`);
  await target.until(2);
  assert.equal(target.oversize.length, 1);
  assert.equal(target.oversize[0]?.[0], big.length);
  assert.match(target.oversize[0]?.[1] ?? '', /^\{"id":7,"pad":"x+/);
  assert.deepEqual(target.frames, ['{"ok":1}']);
});

test('a frame just at the limit is read', async () => {
  const stream = new PassThrough();
  const target = new Collect();
  new FrameReader(stream, 9).listen(target);
  stream.write('{"a":123}\n{"a":1234}\n');
  await target.until(2);
  assert.deepEqual(target.frames, ['{"a":123}']);
  assert.equal(target.oversize[0]?.[0], 10);
});

test('the target that takes over during a frame gets the rest of that chunk', async () => {
  const stream = new PassThrough();
  const second = new Collect();
  const reader = new FrameReader(stream, 1024);
  const seen: string[] = [];
  reader.listen({
    onFrame(text) {
      seen.push(text);
      if (text === 'last-of-first') reader.listen(second);
    },
    onOversize() {},
  });
  stream.write('one\nlast-of-first\ntwo\nthree\n');
  await second.until(2);
  assert.deepEqual(seen, ['one', 'last-of-first']);
  assert.deepEqual(second.frames, ['two', 'three']);
});

test('nothing is read before there is a target, so nothing is lost', async () => {
  const stream = new PassThrough();
  const reader = new FrameReader(stream, 1024);
  stream.write('early\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(stream.readableFlowing, null, 'the stream is not flowing yet');
  const target = new Collect();
  reader.listen(target);
  await target.until(1);
  assert.deepEqual(target.frames, ['early']);
});

test('string chunks (a stream with an encoding set) are read as UTF-8', async () => {
  const stream = new PassThrough({ encoding: 'utf8' });
  const target = new Collect();
  new FrameReader(stream, 1024).listen(target);
  stream.write('{"name":"Zoë"}\n');
  await target.until(1);
  assert.deepEqual(target.frames, ['{"name":"Zoë"}']);
});
