import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LineDecoder } from '../../backend/rpc/LineDecoder.js';

/**
 * The framing is checked as properties: whatever the frames and however the byte stream is cut
 * into chunks, the decoder must hand back the same frames in the same order.
 */

type Event = { frame: string } | { oversize: number };

/** Decodes `bytes` delivered in chunks cut at `cuts`; returns the events in order. */
function decode(bytes: Buffer, cuts: number[], maxBytes = 1 << 20): Event[] {
  const events: Event[] = [];
  const decoder = new LineDecoder(
    maxBytes,
    (frame) => events.push({ frame }),
    (size) => events.push({ oversize: size }),
  );
  for (const chunk of split(bytes, cuts)) {
    decoder.push(chunk);
    chunk.fill(0x21); // as a socket reusing its read buffer would
    assert.ok(
      decoder.bufferedBytes <= maxBytes,
      `buffered ${decoder.bufferedBytes} > max ${maxBytes}`,
    );
  }
  return events;
}

/** Cuts a buffer at the given offsets (taken modulo its length, in any order, repeats allowed). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  if (bytes.length === 0) return [bytes];
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    // Copies, so that a decoder keeping a view of an old chunk is caught by the reuse in decode().
    chunks.push(Buffer.from(bytes.subarray(from, p)));
    from = p;
  }
  return chunks;
}

const frames = (e: Event[]) => e.map((x) => ('frame' in x ? x.frame : `<oversize ${x.oversize}>`));

/** Any Unicode text without a newline that is not blank and does not end in '\r'. */
const frameArb = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 40 })
  .filter((s) => !s.includes('\n') && s.trim().length > 0 && !s.endsWith('\r'));

const cutsArb = fc.array(fc.nat(), { maxLength: 30 });

test('frames joined with \\n and cut into random chunks come back exactly, in order', () => {
  fc.assert(
    fc.property(fc.array(frameArb, { maxLength: 25 }), cutsArb, (input, cuts) => {
      const bytes = Buffer.from(input.map((f) => `${f}\n`).join(''), 'utf8');
      assert.deepEqual(frames(decode(bytes, cuts)), input);
    }),
    { numRuns: 500 },
  );
});

test('\\r\\n line endings are accepted and the \\r is not part of the frame', () => {
  fc.assert(
    fc.property(fc.array(frameArb, { maxLength: 25 }), cutsArb, (input, cuts) => {
      const bytes = Buffer.from(input.map((f) => `${f}\r\n`).join(''), 'utf8');
      assert.deepEqual(frames(decode(bytes, cuts)), input);
    }),
    { numRuns: 300 },
  );
});

test('blank lines anywhere are skipped', () => {
  const blank = fc.constantFrom('', ' ', '\t', '\r', '  \t ', ' \r');
  const item = fc.oneof(
    frameArb.map((f) => ({ frame: f })),
    blank.map((b) => ({ blank: b })),
  );
  fc.assert(
    fc.property(fc.array(item, { maxLength: 30 }), cutsArb, (items, cuts) => {
      const text = items.map((i) => `${'frame' in i ? i.frame : i.blank}\n`).join('');
      const expected = items.flatMap((i) => ('frame' in i ? [i.frame] : []));
      assert.deepEqual(frames(decode(Buffer.from(text, 'utf8'), cuts)), expected);
    }),
    { numRuns: 300 },
  );
});

test('a frame over maxBytes is reported once with its exact size and the frames after it come through intact', () => {
  const maxBytes = 24;
  // Frames from a few bytes to several times the limit, in any mix.
  const anyFrame = fc.oneof(
    frameArb,
    fc
      .tuple(frameArb, fc.integer({ min: 1, max: 8 }))
      .map(([f, n]) => f.repeat(n))
      .filter((s) => !s.endsWith('\r')),
  );
  fc.assert(
    fc.property(fc.array(anyFrame, { maxLength: 20 }), cutsArb, (input, cuts) => {
      const bytes = Buffer.from(input.map((f) => `${f}\n`).join(''), 'utf8');
      const expected: Event[] = input.map((f) => {
        const size = Buffer.byteLength(f, 'utf8');
        return size > maxBytes ? { oversize: size } : { frame: f };
      });
      assert.deepEqual(decode(bytes, cuts, maxBytes), expected);
    }),
    { numRuns: 500 },
  );
});

test('the limit is inclusive: maxBytes passes and maxBytes + 1 is refused, at every cut', () => {
  const maxBytes = 10;
  const fits = 'a'.repeat(maxBytes);
  const over = 'b'.repeat(maxBytes + 1);
  const text = `${fits}\n${over}\n${fits}\n`;
  const bytes = Buffer.from(text);
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j++) {
      assert.deepEqual(
        decode(bytes, [i, j], maxBytes),
        [{ frame: fits }, { oversize: maxBytes + 1 }, { frame: fits }],
        `cut at ${i} and ${j}`,
      );
    }
  }
});

test('multi-byte UTF-8 characters split across chunks at every byte decode correctly', () => {
  const text = 'a€😀é中\u{10FFFF}z';
  const bytes = Buffer.from(`${text}\n${text}\n`, 'utf8');
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j++) {
      assert.deepEqual(frames(decode(bytes, [i, j])), [text, text], `cut at ${i} and ${j}`);
    }
  }
});

test('one byte at a time works for any frames', () => {
  fc.assert(
    fc.property(fc.array(frameArb, { maxLength: 10 }), (input) => {
      const bytes = Buffer.from(input.map((f) => `${f}\n`).join(''), 'utf8');
      const everyByte = Array.from({ length: bytes.length }, (_, i) => i);
      assert.deepEqual(frames(decode(bytes, everyByte)), input);
    }),
    { numRuns: 100 },
  );
});

test('an unfinished frame is held (and counted) until its newline comes', () => {
  const seen: string[] = [];
  const decoder = new LineDecoder(
    100,
    (f) => seen.push(f),
    () => assert.fail('no oversize'),
  );
  decoder.push(Buffer.from('{"a":1}\n{"b":'));
  assert.deepEqual(seen, ['{"a":1}']);
  assert.equal(decoder.bufferedBytes, 5);
  decoder.push(Buffer.from('2}'));
  assert.equal(decoder.bufferedBytes, 7);
  decoder.push(Buffer.from('\n'));
  assert.deepEqual(seen, ['{"a":1}', '{"b":2}']);
  assert.equal(decoder.bufferedBytes, 0);
});

test('a frame too large is not buffered while it streams in', () => {
  const sizes: number[] = [];
  const seen: string[] = [];
  const decoder = new LineDecoder(
    8,
    (f) => seen.push(f),
    (n) => sizes.push(n),
  );
  for (let i = 0; i < 1000; i++) {
    decoder.push(Buffer.from('xxxxxxxxxx'));
    assert.ok(decoder.bufferedBytes <= 8);
  }
  assert.deepEqual(sizes, [], 'reported only when the frame ends');
  decoder.push(Buffer.from('\nok\n'));
  assert.deepEqual(sizes, [10_000]);
  assert.deepEqual(seen, ['ok']);
});

test('a chunk the caller reuses afterwards does not corrupt a held frame', () => {
  const seen: string[] = [];
  const decoder = new LineDecoder(
    100,
    (f) => seen.push(f),
    () => {},
  );
  const chunk = Buffer.from('hello');
  decoder.push(chunk);
  chunk.fill(0x21); // the socket would reuse its buffer like this
  decoder.push(Buffer.from(' world\n'));
  assert.deepEqual(seen, ['hello world']);
});

test('frames of megabytes in 64 KiB chunks, between small ones, come back exactly', () => {
  const sizes = [100, 3 * 1024 * 1024, 10, 1_500_000, 2 * 1024 * 1024 + 1, 5, 700_000];
  const input = sizes.map((n, i) => String.fromCharCode(65 + i).repeat(n));
  const bytes = Buffer.from(input.map((f) => `${f}\n`).join(''), 'latin1');
  const cuts = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => i * 65536 + 17);
  assert.deepEqual(frames(decode(bytes, cuts, 4 * 1024 * 1024)), input);
});
