/**
 * Bad input on the wire to a real master: messages with wrong field types, unknown message types,
 * messages the master does not handle. Each gets the JSON-RPC error that says what was wrong (or,
 * for a one-way message, is dropped with a warning), and the master keeps serving.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcErrorCode } from '../../backend/rpc/index.js';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { connectClient, MockWorker } from '../helpers/masterMocks.js';
import { RawClient } from '../helpers/peer.js';

checkNothingLeftRunning();

const FROM = 'client-badinput';

function registerWorker(fields: Record<string, unknown>) {
  return {
    type: 'RegisterWorker',
    id: 'worker-20000101000000-127.0.0.1-9',
    host: '127.0.0.1',
    port: 9,
    worker: { address: '127.0.0.1:9', name: 'Worker' },
    cores: 4,
    memory: 1024,
    workerWebUiUrl: 'http://127.0.0.1:10',
    masterAddress: '127.0.0.1:7077',
    ...fields,
  };
}

test('wrong field types, unknown and unhandled messages get JSON-RPC errors; the master keeps serving', {
  timeout: 60_000,
}, async (t) => {
  // Open, so that a raw peer gets past the handshake: these are about what it sends after.
  const master = await startMaster(t, { conf: { 'wick.authenticate': false } });
  const raw = await RawClient.connect(master.address, t);
  await raw.hello(FROM);

  // A RegisterWorker whose cores is a string: InvalidParams naming the field and the value.
  const badCores = await raw.ask(FROM, 'Master', registerWorker({ cores: 'four' }));
  assert.equal(badCores.error?.code, RpcErrorCode.InvalidParams);
  assert.match(badCores.error?.message ?? '', /RegisterWorker: field \/cores .*"four"/);

  // A negative port and a missing field.
  const badPort = await raw.ask(FROM, 'Master', registerWorker({ port: -1 }));
  assert.equal(badPort.error?.code, RpcErrorCode.InvalidParams);
  assert.match(badPort.error?.message ?? '', /\/port/);
  const { memory: _, ...noMemory } = registerWorker({});
  const missing = await raw.ask(FROM, 'Master', noMemory as { type: string });
  assert.equal(missing.error?.code, RpcErrorCode.InvalidParams);
  assert.match(missing.error?.message ?? '', /memory/);

  // An extra field is refused too (every message is closed).
  const extra = await raw.ask(FROM, 'Master', registerWorker({ surprise: true }));
  assert.equal(extra.error?.code, RpcErrorCode.InvalidParams);

  // A message type nobody defined: MethodNotFound.
  const unknown = await raw.ask(FROM, 'Master', { type: 'RegisterWorkerPlease' });
  assert.equal(unknown.error?.code, RpcErrorCode.MethodNotFound);
  assert.match(unknown.error?.message ?? '', /RegisterWorkerPlease/);

  // A valid message the master does not take (it is for workers): UnsupportedMessage.
  const unhandled = await raw.ask(FROM, 'Master', {
    type: 'KillDriver',
    driverId: 'driver-20000101000000-0001',
  });
  assert.equal(unhandled.error?.code, RpcErrorCode.UnsupportedMessage);
  assert.match(unhandled.error?.message ?? '', /Unsupported message KillDriver/);

  // A message for an endpoint the master's env does not have.
  const nobody = await raw.ask(FROM, 'Nobody', { type: 'RequestMasterState' });
  assert.equal(nobody.error?.code, RpcErrorCode.EndpointNotFound);

  // Params that are not an envelope at all; a line that is not JSON.
  const notEnvelope = await raw.call('RequestMasterState', [1, 2, 3]);
  assert.equal(notEnvelope.error?.code, RpcErrorCode.InvalidParams);
  await raw.send('{"this is": not json');
  const parse = await raw.take((f) => f.error?.code === RpcErrorCode.ParseError);
  assert.ok(parse.error);

  // A one-way RegisterWorker with a bad field is dropped, with a warning naming the problem.
  const from = master.stderr.length;
  await raw.send({
    jsonrpc: '2.0',
    method: 'RegisterWorker',
    params: { to: 'Master', from: FROM, message: registerWorker({ memory: '1g' }) },
  });
  await master.waitForStderr(
    /Bad frame from client-badinput: dropped RegisterWorker: .*memory/,
    from,
  );

  // Still serving, on the same connection and to others; nothing was registered.
  const state = await raw.ask(FROM, 'Master', { type: 'RequestMasterState' });
  assert.equal(state.result?.type, 'MasterStateResponse');
  assert.deepEqual(state.result?.workers, []);
  assert.ok(raw.isOpen);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url);
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  await client.waitFor((s) => s.workers.length === 1);
  assert.ok(master.isRunning);
});

test('valid but nonsensical input is survived: an unreachable worker address, unknown ids', {
  timeout: 60_000,
}, async (t) => {
  // Open, so that a raw peer gets past the handshake: these are about what it sends after.
  const master = await startMaster(t, { conf: { 'wick.authenticate': false } });
  const client = await connectClient(t, master.url);
  const raw = await RawClient.connect(master.address, t);
  await raw.hello(FROM);
  // A worker endpoint that is not a host:port: the master cannot answer it, and says so in its
  // log, but it does not fall over.
  const from = master.stderr.length;
  await raw.send({
    jsonrpc: '2.0',
    method: 'RegisterWorker',
    params: {
      to: 'Master',
      from: FROM,
      message: registerWorker({ worker: { address: 'no such place', name: 'Worker' } }),
    },
  });
  await master.waitForStderr(/Registering worker 127\.0\.0\.1:9/, from);
  // State changes for things that do not exist are ignored with a warning.
  for (const message of [
    { type: 'ExecutorStateChanged', appId: 'app-20000101000000-0001', execId: 0, state: 'RUNNING' },
    { type: 'DriverStateChanged', driverId: 'driver-20000101000000-0001', state: 'RUNNING' },
    { type: 'UnregisterApplication', appId: 'app-20000101000000-0001' },
    { type: 'MasterChangeAcknowledged', appId: 'app-20000101000000-0001' },
    {
      type: 'WorkerSchedulerStateResponse',
      id: 'worker-nobody',
      executors: [],
      driverIds: [],
    },
  ]) {
    await raw.send({
      jsonrpc: '2.0',
      method: message.type,
      params: { to: 'Master', from: FROM, message },
    });
  }
  await master.waitForStderr(/Scheduler state from unknown worker: worker-nobody/, from);
  assert.match(master.stderr.slice(from), /Got status update for unknown executor/);
  assert.match(master.stderr.slice(from), /Received state RUNNING for unknown driver/);
  const s = await client.state();
  assert.equal(s.status, 'ALIVE');
  assert.deepEqual(s.activeApps, []);
  const w = await MockWorker.start(t, master.url);
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  assert.ok(master.isRunning);
});
