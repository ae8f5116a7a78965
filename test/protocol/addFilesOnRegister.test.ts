/**
 * docs/protocol.md ("Files"), on the wire: an executor that asked for its AppConfig before a file
 * was added, and registers after, gets an AddFiles naming every file added so far — the ones its
 * AppConfig named too — and it arrives before the RegisteredExecutor reply, on the connection it
 * registered on. A raw peer plays the executor, so the order is the order of the frames.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import type { ShippedFile } from '../../backend/protocol/files.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import { RawClient } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

import '../../backend/conf/all.js';

const file = (name: string, digit: string): ShippedFile => ({
  path: name,
  sha256: digit.repeat(64),
  size: 10,
});

test('a registering executor gets AddFiles with every file added so far, before its RegisteredExecutor', {
  timeout: 30_000,
}, async (t) => {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'driver',
    host: '127.0.0.1',
    port: 0,
    auth: { credential: undefined, keys: undefined },
  });
  after(() => env.stop());
  const driver = new DriverEndpoint(new WickConf(), '/apps/here', 3, undefined, { files: [] });
  driver.applicationRegistered('app-20261206000000-0000');
  env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver);
  const one = file('one.txt', 'a');
  const two = file('two.txt', 'b');
  driver.filesAdded([one]);

  const raw = await RawClient.connect(env.address, t);
  const from = 'client-executor-0123456789ab';
  await raw.hello(from);
  const order: string[] = [];
  raw.onFrame = (f) => order.push(typeof f.method === 'string' ? f.method : `reply to ${f.id}`);
  const to = DriverEndpoint.ENDPOINT_NAME;
  const config = await raw.ask(from, to, { type: 'RetrieveAppConfig' });
  assert.deepEqual((config.result as { files?: ShippedFile[] }).files, [one]);
  // Added while the executor fetches what its AppConfig named: not registered, it is not told.
  driver.filesAdded([two]);
  const registered = await raw.ask(from, to, {
    type: 'RegisterExecutor',
    executorId: '0',
    executor: { address: from, name: 'Executor' },
    hostname: '127.0.0.1',
    cores: 1,
    logUrls: {},
  });
  assert.equal((registered.result as { type: string }).type, 'RegisteredExecutor');
  const addFiles = raw.frames.filter((f) => f.method === 'AddFiles');
  assert.equal(addFiles.length, 1, JSON.stringify(raw.frames));
  assert.deepEqual(
    (addFiles[0]?.params as { message: { files: ShippedFile[] } } | undefined)?.message.files,
    [one, two],
  );
  const registerReply = `reply to ${registered.id}`;
  assert.ok(
    order.indexOf('AddFiles') >= 0 && order.indexOf('AddFiles') < order.indexOf(registerReply),
    `AddFiles before the RegisteredExecutor reply: ${order.join(', ')}`,
  );
});
