import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  parseBoolean,
  parseDurationMs,
  parseInteger,
  parseSizeBytes,
} from '../../backend/conf/parse.js';

/** Asserts that `fn` throws a message quoting `raw` and containing `expected`. */
function assertRefused(fn: () => unknown, raw: string, expected: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.ok(err.message.includes(`"${raw}"`), `quotes "${raw}": ${err.message}`);
    assert.match(err.message, expected);
    return true;
  });
}

test('parseDurationMs reads Spark-style durations', () => {
  const cases: [string, number][] = [
    ['500ms', 500],
    ['3s', 3_000],
    ['5m', 300_000],
    ['5min', 300_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['1.5s', 1_500],
    ['0s', 0],
    [' 2 s ', 2_000],
    ['3S', 3_000],
    ['10MS', 10],
    ['42', 42],
  ];
  for (const [raw, ms] of cases) assert.equal(parseDurationMs(raw), ms, raw);
});

test('parseDurationMs takes a bare number in the default unit it is given', () => {
  assert.equal(parseDurationMs('42', 's'), 42_000);
  assert.equal(parseDurationMs('2', 'h'), 7_200_000);
  assert.equal(parseDurationMs('42ms', 's'), 42, 'an explicit unit wins');
});

test('parseDurationMs refuses what is not a duration, quoting it', () => {
  for (const raw of ['', ' ', 's', '-1s', '5 sec', '5x', '1,5s', 'abc', '1e3ms', '5s5', '.5s']) {
    assertRefused(() => parseDurationMs(raw), raw, /expected a duration such as 500ms, 3s/);
  }
});

test('parseSizeBytes reads Spark-style sizes in powers of 1024', () => {
  const cases: [string, number][] = [
    ['512', 512],
    ['512b', 512],
    ['1k', 1024],
    ['1kb', 1024],
    ['1.5k', 1536],
    ['512m', 536_870_912],
    ['128M', 134_217_728],
    ['2g', 2 * 1024 ** 3],
    ['2GB', 2 * 1024 ** 3],
    ['1t', 1024 ** 4],
    [' 4 k ', 4096],
  ];
  for (const [raw, bytes] of cases) assert.equal(parseSizeBytes(raw), bytes, raw);
  assert.equal(parseSizeBytes('3', 'm'), 3 * 1024 ** 2);
});

test('parseSizeBytes refuses what is not a size, quoting it', () => {
  for (const raw of ['', 'm', '-1k', '1kib', '1 x', 'lots', '1e6']) {
    assertRefused(() => parseSizeBytes(raw), raw, /expected a size such as 512k, 512m or 2g/);
  }
});

test('durations and sizes round-trip for any whole number and unit', () => {
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  fc.assert(
    fc.property(
      fc.nat({ max: 1_000_000 }),
      fc.constantFrom(...(Object.keys(units) as (keyof typeof units)[])),
      (n, unit) => parseDurationMs(`${n}${unit}`) === n * units[unit],
    ),
  );
  fc.assert(fc.property(fc.nat({ max: 1_000_000 }), (n) => parseSizeBytes(`${n}k`) === n * 1024));
});

test('parseInteger reads whole numbers, signs and surrounding spaces', () => {
  assert.equal(parseInteger('42'), 42);
  assert.equal(parseInteger(' 7 '), 7);
  assert.equal(parseInteger('-3'), -3);
  assert.equal(parseInteger('+5'), 5);
  assert.equal(parseInteger('0', 0, 10), 0);
  assert.equal(parseInteger('10', 0, 10), 10);
});

test('parseInteger refuses anything but decimal digits, quoting the value', () => {
  for (const raw of ['', ' ', '1.5', '1.0', 'abc', '0x10', '0b11', '1e3', 'Infinity', '12abc']) {
    assertRefused(() => parseInteger(raw), raw, /expected a whole number/);
  }
  assertRefused(() => parseInteger('99999999999999999999'), '99999999999999999999', /whole/);
});

test('parseInteger names the allowed range, whichever bounds are set', () => {
  assertRefused(() => parseInteger('11', 0, 10), '11', /expected a whole number from 0 to 10/);
  assertRefused(() => parseInteger('-1', 0, 10), '-1', /from 0 to 10/);
  assertRefused(() => parseInteger('-1', 0), '-1', /expected a whole number of at least 0\b/);
  assertRefused(
    () => parseInteger('101', undefined, 100),
    '101',
    /expected a whole number of at most 100\b/,
  );
});

test('parseBoolean reads true and false in any case, and refuses anything else', () => {
  assert.equal(parseBoolean('true'), true);
  assert.equal(parseBoolean(' TRUE '), true);
  assert.equal(parseBoolean('false'), false);
  assert.equal(parseBoolean('False'), false);
  for (const raw of ['', 'yes', 'no', '1', '0', 'on', 'truee']) {
    assertRefused(() => parseBoolean(raw), raw, /expected true or false/);
  }
});
