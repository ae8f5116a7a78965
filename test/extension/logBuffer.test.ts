import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LogBuffer } from '../../extension/logs/logBuffer.js';

test('starts with the tail and says what is above it', () => {
  const b = new LogBuffer();
  b.reset(100, Buffer.from('tail\n'));
  assert.match(b.text(), /^\[… 100 earlier bytes/);
  assert.ok(b.text().endsWith('tail\n'));
});

test('appends in order, skipping overlap, refusing gaps', () => {
  const b = new LogBuffer();
  b.reset(0, Buffer.from('abc'));
  assert.equal(b.append(1, Buffer.from('bcd')), true);
  assert.equal(b.append(0, Buffer.from('ab')), false);
  assert.equal(b.bytes().toString(), 'abcd');
  assert.throws(() => b.append(10, Buffer.from('x')), /gap/);
});

test('load earlier prepends exactly the missing bytes', () => {
  const b = new LogBuffer();
  b.reset(4, Buffer.from('efgh'));
  assert.equal(b.prepend(0, Buffer.from('abcdXX')), true);
  assert.equal(b.bytes().toString(), 'abcdefgh');
  assert.equal(b.start, 0);
  assert.equal(b.text(), 'abcdefgh');
});

test('says how the process ended', () => {
  const b = new LogBuffer();
  b.reset(0, Buffer.from('line'));
  b.end_('process exited with status 0');
  assert.equal(b.text(), 'line\n[process exited with status 0]\n');
});

test('no byte lost or repeated: any split of a file into overlapping chunks rebuilds it', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 1, maxLength: 300 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      fc.nat(),
      (bytes, cuts, startCut) => {
        const file = Buffer.from(bytes);
        const start = startCut % file.length;
        const b = new LogBuffer();
        b.reset(start, file.subarray(start, start));
        let at = start;
        for (const c of cuts.map((x) => x % (file.length + 1)).sort((x, y) => x - y)) {
          if (c <= at) continue;
          // Each chunk re-sends a little of what came before (an overlap), as a re-follow might.
          const from = Math.max(start, at - 2);
          b.append(from, file.subarray(from, c));
          at = c;
        }
        b.append(at, file.subarray(at));
        b.prepend(0, file.subarray(0, start));
        assert.deepEqual(b.bytes(), file);
      },
    ),
  );
});
