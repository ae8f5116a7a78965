import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  endpointURI,
  isClientAddress,
  parseEndpointURI,
  RpcAddress,
} from '../../backend/rpc/RpcAddress.js';

test('RpcAddress.parse reads host:port', () => {
  for (const [raw, host, port] of [
    ['127.0.0.1:7077', '127.0.0.1', 7077],
    ['localhost:1', 'localhost', 1],
    ['spark-master.example.com:65535', 'spark-master.example.com', 65535],
  ] as const) {
    const a = RpcAddress.parse(raw);
    assert.equal(a.host, host);
    assert.equal(a.port, port);
    assert.equal(a.hostPort, raw);
    assert.equal(a.toString(), raw);
  }
});

test('RpcAddress.parse reads a bracketed IPv6 host and gives it back bracketed', () => {
  const a = RpcAddress.parse('[::1]:7077');
  assert.equal(a.host, '::1');
  assert.equal(a.port, 7077);
  assert.equal(a.hostPort, '[::1]:7077');
  assert.equal(a.toWickURL(), 'wick://[::1]:7077');
  const mapped = RpcAddress.parse('[::ffff:10.0.0.1]:80');
  assert.equal(mapped.host, '::ffff:10.0.0.1');
  assert.equal(new RpcAddress('fe80::1', 9).hostPort, '[fe80::1]:9');
});

test('RpcAddress.parse refuses bad addresses and quotes them', () => {
  const bad = [
    '',
    'localhost',
    'localhost:',
    ':7077',
    'host:0',
    'host:65536',
    'host:123456',
    'host:-1',
    'host:1.5',
    'host:port',
    '::1:7077',
    '[::1]',
    '[::1]7077',
    '[nothost]:7077',
    'two words:7077',
    'wick://host:7077',
    'host:7077/Master',
    ' host:7077',
  ];
  for (const raw of bad) {
    assert.throws(
      () => RpcAddress.parse(raw),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.ok(err.message.includes(`"${raw}"`), `quotes "${raw}": ${err.message}`);
        assert.match(err.message, /expected host:port with a port from 1 to 65535/);
        return true;
      },
      raw,
    );
  }
});

test('host:port strings round-trip through parse and hostPort', () => {
  const host = fc.oneof(
    fc.domain(),
    fc.ipV4(),
    fc.ipV6().map((h) => `[${h}]`),
  );
  fc.assert(
    fc.property(host, fc.integer({ min: 1, max: 65535 }), (h, port) => {
      const raw = `${h}:${port}`;
      const a = RpcAddress.parse(raw);
      assert.equal(a.port, port);
      assert.equal(a.hostPort, raw);
      assert.equal(RpcAddress.parse(a.hostPort).hostPort, raw);
    }),
  );
});

test('wick:// endpoint URIs are made and parsed', () => {
  assert.equal(endpointURI('10.0.0.5:7077', 'Master'), 'wick://10.0.0.5:7077/Master');
  const { address, name } = parseEndpointURI('wick://10.0.0.5:7077/Master');
  assert.equal(address.hostPort, '10.0.0.5:7077');
  assert.equal(name, 'Master');
  const v6 = parseEndpointURI('wick://[::1]:7078/Worker');
  assert.equal(v6.address.host, '::1');
  assert.equal(v6.address.port, 7078);
  assert.equal(v6.name, 'Worker');
  assert.equal(
    endpointURI('client-abc', 'endpoint-verifier'),
    'wick://client-abc/endpoint-verifier',
  );
});

test('an endpoint name with any characters survives endpointURI and parseEndpointURI', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }), (name) => {
      const uri = endpointURI('h:1', name);
      assert.equal(parseEndpointURI(uri).name, name);
    }),
    { numRuns: 300 },
  );
});

test('parseEndpointURI refuses bad URIs and quotes them', () => {
  const bad = [
    '',
    'Master',
    'spark://host:7077/Master',
    'wick://host:7077',
    'wick://host:7077/',
    'wick:///Master',
    'wick://host:7077/a/b',
    'wick://host:7077/two words',
    'wick://host:7077/%E0%A4%A',
    'wick://host:7077/%',
  ];
  for (const raw of bad) {
    assert.throws(
      () => parseEndpointURI(raw),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.ok(err.message.includes(`"${raw}"`), `quotes "${raw}": ${err.message}`);
        assert.match(err.message, /expected wick:\/\/host:port\/Name/);
        return true;
      },
      raw,
    );
  }
});

test('parseEndpointURI refuses a URI whose address is bad, naming the address', () => {
  for (const [uri, addr] of [
    ['wick://host/Master', 'host'],
    ['wick://host:0/Master', 'host:0'],
  ]) {
    assert.throws(() => parseEndpointURI(uri as string), new RegExp(`"${addr}"`), uri);
  }
});

test('client-mode addresses are told apart from host:port', () => {
  assert.equal(isClientAddress('client-local-0a1b2c'), true);
  assert.equal(isClientAddress('127.0.0.1:7077'), false);
  assert.equal(isClientAddress('clientbox:7077'), false);
  // A machine may well be called client-01; with a port it is an address to dial.
  assert.equal(isClientAddress('client-01:7077'), false);
  assert.equal(RpcAddress.parse('client-01:7077').host, 'client-01');
});
