/**
 * The driver's endpoint on a real RpcEnv, with mock executors (each its own client-mode RpcEnv in
 * this process, as Spark's tests use a MockExecutor): registration, the app's configuration,
 * launching within each executor's cores, retries elsewhere, cancelling the rest of a failed job,
 * and rerunning what a disconnected executor ran.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { RetrieveAppConfig, StatusUpdate } from '../../../backend/protocol/executor.js';
import { WickListenerEvent } from '../../../backend/protocol/listener.js';
import type { TaskDescription, TaskState } from '../../../backend/protocol/task.js';
import { type RpcEndpointRef, RpcEnv } from '../../../backend/rpc/index.js';
import { type MockExecutorEndpoint, registerMockExecutor } from '../../helpers/mockExecutor.js';
import { waitFor } from '../../helpers/processes.js';

import '../../../backend/conf/all.js';
import { testProtocol } from '../../helpers/protocol.js';

let env: RpcEnv;
let driver: DriverEndpoint;
let driverUrl: string;
const mocks: MockExecutor[] = [];
let e1: MockExecutor;
let e2: MockExecutor;
/** What the endpoint posted on its listener bus, over every test here. */
const events: WickListenerEvent[] = [];

before(async () => {
  const conf = new WickConf().set('wick.app.name', 'endpoint test');
  env = await RpcEnv.create({ protocol: testProtocol, name: 'testDriver', conf });
  driver = new DriverEndpoint(conf, '/apps/here', 3);
  driver.bus.onEvent((e) => void events.push(e));
  driver.applicationRegistered('app-20260101000000-0000');
  driverUrl = env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver).toString();
});

after(async () => {
  await Promise.all(mocks.map((m) => m.env.stop()));
  await env.stop();
});

class MockExecutor {
  private constructor(
    readonly id: string,
    readonly env: RpcEnv,
    readonly endpoint: MockExecutorEndpoint,
    readonly driver: RpcEndpointRef,
  ) {}

  /** Connects and asks RegisterExecutor; resolves with the mock and the driver's answer. */
  static async start(id: string, cores: number) {
    const { env, endpoint, driver, reply } = await registerMockExecutor(driverUrl, id, cores, []);
    const mock = new MockExecutor(id, env, endpoint, driver);
    mocks.push(mock);
    return { mock, reply };
  }

  /** The tasks launched here, waiting until there are `n`. */
  async launched(n: number): Promise<TaskDescription[]> {
    return [...(await this.endpoint.launchedAtLeast(n))];
  }

  /** The next task launched here after the first `from`, waiting for it. */
  nextLaunched(from: number): Promise<TaskDescription> {
    return this.endpoint.when(() => this.endpoint.launched[from]);
  }

  report(taskId: number, state: TaskState, extra: { result?: unknown; error?: Error } = {}) {
    const { error, result } = extra;
    this.driver.send(
      StatusUpdate({
        executorId: this.id,
        taskId,
        state,
        ...(result !== undefined ? { result } : {}),
        ...(error
          ? { error: { name: error.name, message: error.message, stack: error.stack } }
          : {}),
      }),
    );
  }
}

function spec(partitions: number) {
  return {
    sources: Array.from({ length: partitions }, (_, i) => ({ kind: 'array' as const, data: [i] })),
    transformations: [],
    action: { kind: 'collect' as const },
  };
}

/** Resolves once `probe` holds, checking after each message the driver handles. */
test('executors get the application’s configuration, and a duplicate executor id is refused', {
  timeout: 60_000,
}, async () => {
  const { mock, reply } = await MockExecutor.start('1', 1);
  e1 = mock;
  assert.equal(reply.type, 'RegisteredExecutor');
  const config = await e1.driver.ask(RetrieveAppConfig({}));
  assert.equal(config.appId, 'app-20260101000000-0000');
  assert.equal(config.appDir, '/apps/here');
  assert.equal(config.props['wick.app.name'], 'endpoint test');

  const dup = await MockExecutor.start('1', 4);
  assert.deepEqual(
    { type: dup.reply.type, message: dup.reply.message },
    { type: 'RegisterExecutorFailed', message: 'Duplicate executor ID: 1' },
  );
  assert.equal(driver.executors.get('1')?.cores, 1, 'the first one stays');
  e2 = (await MockExecutor.start('2', 1)).mock;
  assert.equal(driver.totalCores, 2);
});

test('tasks go out within each executor’s cores, and a failed one is retried on the other', {
  timeout: 60_000,
}, async () => {
  const done = driver.runJob(spec(3));
  const [t1] = await e1.launched(1);
  const [t2] = await e2.launched(1);
  assert.ok(t1 && t2);
  assert.deepEqual([t1.partition, t2.partition], [0, 1], 'one task per core; the third waits');
  e2.report(t2.taskId, 'RUNNING');
  e2.report(t2.taskId, 'FINISHED', { result: ['b'] });
  const [, t3] = await e2.launched(2);
  assert.equal(t3?.partition, 2);
  e2.report(t3?.taskId as number, 'FINISHED', { result: ['c'] });
  await waitFor('a free core on executor 2', () => driver.executors.get('2')?.freeCores === 1);
  // Both executors have a free core now: the retry leaves the one it failed on.
  e1.report(t1.taskId, 'FAILED', { error: new Error('first try') });
  const [, , retry] = await e2.launched(3);
  assert.deepEqual([retry?.partition, retry?.attempt], [0, 1]);
  e2.report(retry?.taskId as number, 'FINISHED', { result: ['a'] });
  assert.deepEqual(await done, [['a'], ['b'], ['c']]);
  await waitFor('every core free', () =>
    [...driver.executors.values()].every((e) => e.freeCores === e.cores),
  );
});

test('when a job fails its other running tasks are killed, and their cores come back when they end', {
  timeout: 60_000,
}, async () => {
  const from1 = e1.endpoint.launched.length;
  const from2 = e2.endpoint.launched.length;
  const killsFrom2 = e2.endpoint.kills.length;
  const done = driver.runJob(spec(2));
  const a = await e1.nextLaunched(from1);
  const b = await e2.nextLaunched(from2);
  // Task a fails three times (maxFailures); b keeps running on executor 2 meanwhile.
  let failing = a.taskId;
  for (let i = 0; i < 3; i++) {
    const mark = e1.endpoint.launched.length;
    e1.report(failing, 'FAILED', { error: new TypeError(`bad ${i}`) });
    if (i < 2) failing = (await e1.nextLaunched(mark)).taskId;
  }
  await assert.rejects(done, {
    name: 'JobFailedError',
    message:
      /^Job aborted due to stage failure: Task 0 in stage \d+\.0 failed 3 times, most recent failure: Lost task 0\.2 .*\(TID \d+, executor 1\): TypeError: bad 2\n/,
  });
  const kill = await e2.endpoint.when(() => e2.endpoint.kills[killsFrom2]);
  assert.equal(kill.taskId, b.taskId);
  assert.equal(driver.executors.get('2')?.freeCores, 0, 'held until the task reports its end');
  e2.report(b.taskId, 'KILLED', { error: new Error('killed') });
  await waitFor('a free core on executor 2', () => driver.executors.get('2')?.freeCores === 1);
  assert.equal(driver.executors.get('1')?.freeCores, 1);
});

test('a disconnected executor is removed and its running task goes to another', {
  timeout: 60_000,
}, async () => {
  const from1 = e1.endpoint.launched.length;
  const from2 = e2.endpoint.launched.length;
  const done = driver.runJob(spec(1));
  // Offers go in registration order: executor 1 gets it.
  const first = await e1.nextLaunched(from1);
  assert.ok(first);
  await e1.env.stop();
  await waitFor('executor 1 removed', () => !driver.executors.has('1'));
  const again = await e2.nextLaunched(from2);
  assert.equal(again.attempt, 0, 'a lost executor is not a failure of the task');
  e2.report(again.taskId, 'FINISHED', { result: ['again'] });
  assert.deepEqual(await done, [['again']]);
});

test('the endpoint posts executors added and removed and tasks ended on its bus, each a valid event', () => {
  for (const e of events) assert.ok(Value.Check(WickListenerEvent, e), JSON.stringify(e));
  const added = events.filter((e) => e.event === 'WickListenerExecutorAdded');
  assert.deepEqual(
    added.map((e) => [e.executorId, e.host, e.cores]),
    [
      ['1', '127.0.0.1', 1],
      ['2', '127.0.0.1', 1],
    ],
    'the duplicate registration posts nothing',
  );
  const removed = events.filter((e) => e.event === 'WickListenerExecutorRemoved');
  assert.deepEqual(
    removed.map((e) => [e.executorId, e.reason, e.workerLost]),
    [['1', 'Executor 1 disconnected', false]],
  );
  const ends = events.filter((e) => e.event === 'WickListenerTaskEnd');
  // Every end reported above (RUNNING is none): 2 + 3 + 2 + 1.
  assert.deepEqual(
    ends.map((e) => e.state),
    [
      'FINISHED',
      'FINISHED',
      'FAILED',
      'FINISHED',
      'FAILED',
      'FAILED',
      'FAILED',
      'KILLED',
      'FINISHED',
    ],
  );
  // The job of the task killed after its job aborted is gone by then: it is told without one.
  assert.deepEqual(
    ends.filter((e) => e.jobId === undefined).map((e) => e.state),
    ['KILLED'],
  );
});
