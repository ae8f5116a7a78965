/**
 * ZooKeeperPersistenceEngine against a real ZooKeeper: records (users' tokens among them) written,
 * replaced, removed and read back; a znode that is not a valid record is skipped; a second engine (another master) sees what
 * the first wrote.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ZooKeeperPersistenceEngine } from '../../backend/master/persistence/ZooKeeperPersistenceEngine.js';
import { CreateMode, ZkConnection } from '../../backend/master/zookeeper/ZkConnection.js';
import { skipWithoutZooKeeper, startZooKeeper } from '../helpers/zookeeper.js';

const endpoint = { address: '127.0.0.1:40001', name: 'Worker' };
const worker = (id: string, cores: number) => ({
  id,
  host: '127.0.0.1',
  port: 40001,
  cores,
  memory: 1024,
  endpoint,
  webUiAddress: 'http://127.0.0.1:8081',
});

test('records round-trip through ZooKeeper, corrupt znodes are skipped, and another master sees them', {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  const zk = await startZooKeeper(t);
  const a = await ZooKeeperPersistenceEngine.open(zk.url, '/wick-p/', 4_000);
  t.after(() => a.close());
  assert.equal(a.dir, '/wick-p/master_status');
  await a.addWorker(worker('worker-1', 2));
  await a.addWorker(worker('worker-1', 4)); // replaced, not duplicated
  await a.addWorker(worker('worker-2', 1));
  await a.removeWorker('worker-2');
  await a.removeWorker('worker-never-there');
  // A relaunched driver's record names the one it replaced (SPARK-19900), which is removed.
  const desc = {
    appPath: '/a.js',
    mem: 64,
    cores: 1,
    supervise: true,
    command: { argv: ['node'], env: {} },
  };
  // It keeps the token that submitted the first (its owner).
  const relaunch = {
    id: 'driver-2',
    desc,
    submitDate: 2,
    relaunchedFrom: 'driver-1',
    owner: 'tok-0123456789abcdef',
  };
  await a.addDriver({ id: 'driver-1', desc, submitDate: 1 });
  await a.addDriver(relaunch);
  await a.removeDriver('driver-1');
  // Users' tokens, by their hashed record: one made, one made and revoked.
  const token = (id: string, name: string) => ({
    id,
    name,
    createdAt: 1,
    allApps: false,
    keySha256: 'ab'.repeat(32),
  });
  await a.addToken(token('tok-0123456789abcdef', 'alice'));
  await a.addToken(token('tok-fedcba9876543210', 'carol'));
  await a.removeToken('tok-fedcba9876543210');

  const raw = new ZkConnection(zk.url, 4_000);
  t.after(() => raw.close());
  await raw.waitConnected(10_000);
  await raw.create(`${a.dir}/app_app-bad`, Buffer.from('{"id": '), CreateMode.PERSISTENT);
  await raw.create(`${a.dir}/notes`, Buffer.from('not a record'), CreateMode.PERSISTENT);
  // A token record with its key instead of the key's hash is not one: skipped.
  await raw.create(
    `${a.dir}/token_tok-1111111111111111`,
    Buffer.from(JSON.stringify({ ...token('tok-1111111111111111', 'mallory'), key: 'x' })),
    CreateMode.PERSISTENT,
  );

  const b = await ZooKeeperPersistenceEngine.open(zk.url, '/wick-p', 4_000);
  t.after(() => b.close());
  const state = await b.readPersistedData();
  assert.deepEqual(state, {
    apps: [],
    drivers: [relaunch],
    workers: [worker('worker-1', 4)],
    tokens: [token('tok-0123456789abcdef', 'alice')],
  });
});
