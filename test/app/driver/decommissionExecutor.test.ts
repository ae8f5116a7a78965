/**
 * DriverEndpoint.decommissionExecutor (the master's ExecutorDecommissioned) on a real RpcEnv with
 * mock executors: a decommissioning executor is given no more tasks, is stopped (StopExecutor)
 * only once its running task has ended, and one that registers after it was decommissioned is
 * stopped at once; the other executors take the work.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { StatusUpdate } from '../../../backend/protocol/executor.js';
import { type RpcEndpointRef, RpcEnv } from '../../../backend/rpc/index.js';
import { type MockExecutorEndpoint, registerMockExecutor } from '../../helpers/mockExecutor.js';
import '../../../backend/conf/all.js';
import { testProtocol } from '../../helpers/protocol.js';

let env: RpcEnv;
let driver: DriverEndpoint;
let driverUrl: string;
const envs: RpcEnv[] = [];

before(async () => {
  const conf = new WickConf().set('wick.app.name', 'decommission test');
  env = await RpcEnv.create({ protocol: testProtocol, name: 'testDriver', conf });
  driver = new DriverEndpoint(conf, '/apps/here', 3);
  driver.applicationRegistered('app-20260101000000-0000');
  driverUrl = env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver).toString();
});

after(async () => {
  await Promise.all(envs.map((e) => e.stop()));
  await env.stop();
});

async function executor(id: string): Promise<{ ep: MockExecutorEndpoint; ref: RpcEndpointRef }> {
  const m = await registerMockExecutor(driverUrl, id, 1, []);
  envs.push(m.env);
  assert.equal(m.reply.type, 'RegisteredExecutor');
  return { ep: m.endpoint, ref: m.driver };
}

function finish(ref: RpcEndpointRef, executorId: string, taskId: number, result: unknown) {
  ref.send(StatusUpdate({ executorId, taskId, state: 'FINISHED', result }));
}

const spec = (partitions: number) => ({
  sources: Array.from({ length: partitions }, (_, i) => ({ kind: 'array' as const, data: [i] })),
  transformations: [],
  action: { kind: 'collect' as const },
});

test('a decommissioning executor runs out its task, gets no other, and is stopped once it has none', {
  timeout: 60_000,
}, async () => {
  const e1 = await executor('1');
  const e2 = await executor('2');
  const done = driver.runJob(spec(3));
  const [a] = await e1.ep.launchedAtLeast(1);
  const [b] = await e2.ep.launchedAtLeast(1);
  assert.ok(a && b);
  driver.decommissionExecutor('1', 'worker decommissioned');
  // Its running task is not taken away, and it is not stopped while the task runs.
  assert.deepEqual(e1.ep.kills, []);
  // Its task ends: it is stopped, and the waiting task is not given to it, free as it is.
  finish(e1.ref, '1', a.taskId, ['a']);
  await e1.ep.when(() => (e1.ep.stops > 0 ? true : undefined));
  assert.equal(e1.ep.stops, 1);
  // The waiting task goes to executor 2 once its core is free.
  finish(e2.ref, '2', b.taskId, ['b']);
  const [, c] = await e2.ep.launchedAtLeast(2);
  assert.ok(c);
  assert.equal(e1.ep.launched.length, 1, 'nothing more was launched on executor 1');
  finish(e2.ref, '2', c.taskId, ['c']);
  assert.deepEqual(await done, [['a'], ['b'], ['c']]);
  assert.equal(e2.ep.stops, 0);
});

test('an executor decommissioned before it registers is stopped as it registers, with no task', {
  timeout: 60_000,
}, async () => {
  driver.decommissionExecutor('3', 'worker decommissioned');
  const e3 = await executor('3');
  await e3.ep.when(() => (e3.ep.stops > 0 ? true : undefined));
  assert.deepEqual(e3.ep.launched, []);
});
