import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcConf } from '../../backend/conf/rpc.js';
import {
  ConfigError,
  conf,
  isKnownKey,
  knownConfigEntries,
  WickConf,
} from '../../backend/conf/WickConf.js';

/** Asserts a ConfigError that names the key, quotes the value, and says what was expected. */
function assertConfigError(fn: () => unknown, key: string, value: string, expected: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `a ConfigError, got ${err}`);
    assert.equal(err.key, key);
    assert.equal(err.value, value);
    assert.ok(err.message.includes(key), `names ${key}: ${err.message}`);
    assert.ok(err.message.includes(`"${value}"`), `quotes "${value}": ${err.message}`);
    assert.match(err.message, expected);
    assert.ok(err.cause instanceof Error, 'keeps the parser error as cause');
    return true;
  });
}

test('an unset key reads as its default', () => {
  const c = new WickConf();
  assert.equal(c.get(RpcConf.askTimeout), 120_000);
  assert.equal(c.get(RpcConf.maxMessageSize), 128 * 1024 * 1024);
  assert.equal(c.get(RpcConf.portMaxRetries), 16);
  assert.equal(c.get(RpcConf.authenticate), true);
  assert.equal(c.get(RpcConf.authenticateSecret), '');
});

test('a set key is parsed by its entry', () => {
  const c = new WickConf({
    'wick.rpc.askTimeout': '5s',
    'wick.rpc.message.maxSize': '1m',
    'wick.port.maxRetries': '3',
    'wick.authenticate': 'TRUE',
    'wick.authenticate.secret': 's3cret',
  });
  assert.equal(c.get(RpcConf.askTimeout), 5_000);
  assert.equal(c.get(RpcConf.maxMessageSize), 1024 * 1024);
  assert.equal(c.get(RpcConf.portMaxRetries), 3);
  assert.equal(c.get(RpcConf.authenticate), true);
  assert.equal(c.get(RpcConf.authenticateSecret), 's3cret');
});

test('a bad value fails with a ConfigError naming the key, the value and what was expected', () => {
  const c = new WickConf({
    'wick.rpc.askTimeout': 'soon',
    'wick.rpc.message.maxSize': 'huge',
    'wick.port.maxRetries': '5000',
    'wick.authenticate': 'yes',
  });
  assertConfigError(() => c.get(RpcConf.askTimeout), 'wick.rpc.askTimeout', 'soon', /duration/);
  assertConfigError(
    () => c.get(RpcConf.maxMessageSize),
    'wick.rpc.message.maxSize',
    'huge',
    /expected a size/,
  );
  assertConfigError(
    () => c.get(RpcConf.portMaxRetries),
    'wick.port.maxRetries',
    '5000',
    /from 0 to 1000/,
  );
  assertConfigError(() => c.get(RpcConf.authenticate), 'wick.authenticate', 'yes', /true or false/);
});

test('validate() passes a good conf and ignores unknown keys', () => {
  const c = new WickConf({ 'wick.rpc.askTimeout': '30s', 'spark.whatever': 'x' });
  assert.doesNotThrow(() => c.validate());
});

test('validate() fails on the first bad known key, even one nobody has read yet', () => {
  const c = new WickConf({ 'wick.rpc.askTimeout': '30s', 'wick.port.maxRetries': '-1' });
  assertConfigError(() => c.validate(), 'wick.port.maxRetries', '-1', /whole number from 0/);
});

test('unknownKeys() lists exactly the keys no entry declares, such as typos', () => {
  const c = new WickConf({
    'wick.rpc.askTimeout': '30s',
    'wick.rpc.askTimout': '30s',
    'wick.authenticate': 'false',
    'spark.master': 'spark://h:7077',
  });
  assert.deepEqual(c.unknownKeys().sort(), ['spark.master', 'wick.rpc.askTimout']);
  assert.deepEqual(new WickConf().unknownKeys(), []);
});

test('a conf is built from a record, a Map or pairs, and set/getRaw/contains/entries agree', () => {
  const fromRecord = new WickConf({ a: '1', b: '2' });
  const fromMap = new WickConf(
    new Map([
      ['a', '1'],
      ['b', '2'],
    ]),
  );
  const fromPairs = new WickConf([
    ['a', '1'],
    ['b', '2'],
  ]);
  for (const c of [fromRecord, fromMap, fromPairs]) {
    assert.deepEqual(c.entries(), [
      ['a', '1'],
      ['b', '2'],
    ]);
  }
  const c = new WickConf().set('k', 'v');
  assert.equal(c.getRaw('k'), 'v');
  assert.equal(c.contains('k'), true);
  assert.equal(c.contains('missing'), false);
  assert.equal(c.getRaw('missing'), undefined);
  c.set('k', 'w');
  assert.equal(c.getRaw('k'), 'w', 'set replaces');
});

test('clone() copies the settings; changing one leaves the other', () => {
  const a = new WickConf({ 'wick.rpc.askTimeout': '1s' });
  const b = a.clone();
  b.set('wick.rpc.askTimeout', '2s');
  a.set('only.in.a', 'x');
  assert.equal(a.get(RpcConf.askTimeout), 1_000);
  assert.equal(b.get(RpcConf.askTimeout), 2_000);
  assert.equal(b.contains('only.in.a'), false);
});

test('declared entries are known, listed in key order, and carry their default text', () => {
  assert.equal(isKnownKey('wick.rpc.askTimeout'), true);
  assert.equal(isKnownKey('wick.rpc.askTimout'), false);
  const keys = knownConfigEntries().map((e) => e.key);
  assert.deepEqual(
    keys,
    [...keys].sort((x, y) => x.localeCompare(y)),
  );
  for (const k of Object.values(RpcConf).map((e) => e.key)) assert.ok(keys.includes(k), k);
  assert.equal(RpcConf.askTimeout.defaultText, '120s');
  assert.equal(RpcConf.portMaxRetries.defaultText, '16');
});

test('conf.* builders parse the default at declaration and refuse a bad one', () => {
  const entry = conf.durationMs('test.wickconf.interval', '2m', 'A test-only duration.');
  assert.equal(entry.defaultValue, 120_000);
  assert.equal(new WickConf().get(entry), 120_000);
  assert.equal(isKnownKey('test.wickconf.interval'), true);
  const bounded = conf.int('test.wickconf.count', 3, 'A test-only integer.', 1, 5);
  assertConfigError(
    () => new WickConf({ 'test.wickconf.count': '6' }).get(bounded),
    'test.wickconf.count',
    '6',
    /from 1 to 5/,
  );
  assert.throws(
    () => conf.sizeBytes('test.wickconf.badDefault', 'big', 'A default that does not parse.'),
    /expected a size.*"big"/,
  );
  assert.equal(isKnownKey('test.wickconf.badDefault'), false);
});
