import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import {
  chooseDriverAddress,
  localAddressTowards,
  routeToMasters,
} from '../../../backend/app/driver/driverAddress.js';

const unset = { host: '', bindAddress: '' };
const route = { master: '10.1.2.3:7077', local: '10.1.2.9' };

test('with no setting the driver advertises and binds its address towards the master', () => {
  const a = chooseDriverAddress(unset, route);
  assert.equal(a.advertise, '10.1.2.9');
  assert.equal(a.bind, '10.1.2.9');
  assert.match(a.reason, /route to the master 10\.1\.2\.3:7077/);
});

test('a master on loopback gives a driver on loopback', () => {
  const a = chooseDriverAddress(unset, { master: '127.0.0.1:7077', local: '127.0.0.1' });
  assert.deepEqual([a.advertise, a.bind], ['127.0.0.1', '127.0.0.1']);
});

test('wick.driver.host overrides the route, and is bound unless wick.driver.bindAddress says else', () => {
  const a = chooseDriverAddress({ host: '192.168.5.5', bindAddress: '' }, route);
  assert.deepEqual(
    [a.advertise, a.bind, a.reason],
    ['192.168.5.5', '192.168.5.5', 'wick.driver.host'],
  );
  const b = chooseDriverAddress({ host: '203.0.113.7', bindAddress: '0.0.0.0' }, route);
  assert.deepEqual([b.advertise, b.bind], ['203.0.113.7', '0.0.0.0']);
});

test('wick.driver.bindAddress alone keeps the advertised address of the route', () => {
  const a = chooseDriverAddress({ host: '', bindAddress: '0.0.0.0' }, route);
  assert.deepEqual([a.advertise, a.bind], ['10.1.2.9', '0.0.0.0']);
});

test('no route to any master falls back to loopback, saying so', () => {
  const a = chooseDriverAddress(unset, undefined);
  assert.deepEqual([a.advertise, a.bind], ['127.0.0.1', '127.0.0.1']);
  assert.match(a.reason, /no master address resolved/);
});

test('the route towards a loopback master starts on loopback; an unresolvable master has none', async () => {
  assert.equal(await localAddressTowards('127.0.0.1:7077'), '127.0.0.1');
  assert.equal(await localAddressTowards('no-such-host.invalid:7077'), undefined);
  const found = await routeToMasters(['no-such-host.invalid:7077', '127.0.0.1:7078']);
  assert.deepEqual(found, { master: '127.0.0.1:7078', local: '127.0.0.1' });
  assert.ok(net.isIP(found?.local ?? ''));
});
