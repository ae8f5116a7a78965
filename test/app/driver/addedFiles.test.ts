/**
 * The files an application adds, as the driver's endpoint tells its executors of them (on a real
 * RpcEnv, with mock executors): the registered ones at once, later ones in their AppConfig, and
 * one that asked for its AppConfig before a file was added and registered after — which neither
 * told — once it registers, before any task of it needs the file.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { RetrieveAppConfig, StatusUpdate } from '../../../backend/protocol/executor.js';
import type { ShippedFile } from '../../../backend/protocol/files.js';
import { registerMockExecutor } from '../../helpers/mockExecutor.js';

import '../../../backend/conf/all.js';
import { RpcEnv as Env, type RpcEnv } from '../../../backend/rpc/index.js';
import { testProtocol } from '../../helpers/protocol.js';

let env: RpcEnv;
let driver: DriverEndpoint;
let driverUrl: string;
const mockEnvs: RpcEnv[] = [];
let a: Awaited<ReturnType<typeof registerMockExecutor>>;

const file = (name: string, digit: string): ShippedFile => ({
  path: name,
  sha256: digit.repeat(64),
  size: 10,
});
const f1 = file('one.txt', 'a');
const f2 = file('two.txt', 'b');

before(async () => {
  const conf = new WickConf().set('wick.app.name', 'added files test');
  env = await Env.create({ protocol: testProtocol, name: 'testDriver', conf });
  driver = new DriverEndpoint(conf, '/apps/here', 3, undefined, { files: [] });
  driver.applicationRegistered('app-20260101000000-0000');
  driverUrl = env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver).toString();
});

after(async () => {
  await Promise.all(mockEnvs.map((e) => e.stop()));
  await env.stop();
});

test('a registered executor is told of each added file, and AppConfig names them for later ones', {
  timeout: 30_000,
}, async () => {
  a = await registerMockExecutor(driverUrl, '1', 1, mockEnvs);
  driver.filesAdded([f1]);
  assert.deepEqual(await a.endpoint.when(() => a.endpoint.addedFiles[0]), [f1]);
  const config = await a.driver.ask(RetrieveAppConfig({}));
  assert.deepEqual(config.files, [f1]);

  // Each task says how many of the files it needs.
  const done = driver.runJob({
    sources: [{ kind: 'array', data: [1] }],
    transformations: [],
    action: { kind: 'collect' },
  });
  const [task] = await a.endpoint.launchedAtLeast(1);
  assert.equal(task?.files, 1);
  a.driver.send(
    StatusUpdate({
      executorId: '1',
      taskId: task?.taskId as number,
      state: 'FINISHED',
      result: [1],
    }),
  );
  assert.deepEqual(await done, [[1]]);
});

test('an executor that asked for its AppConfig before a file was added is told of every file when it registers, before its tasks', {
  timeout: 30_000,
}, async () => {
  // Executor 2 starts: its AppConfig names f1 only...
  const early = await a2Config();
  assert.deepEqual(early.files, [f1]);
  // ...f2 is added while it fetches what it was told of...
  driver.filesAdded([f2]);
  // ...then it registers, and gets everything added so far.
  const b = await registerMockExecutor(driverUrl, '2', 1, mockEnvs);
  assert.deepEqual(await b.endpoint.when(() => b.endpoint.addedFiles[0]), [f1, f2]);

  const done = driver.runJob({
    sources: [
      { kind: 'array', data: [1] },
      { kind: 'array', data: [2] },
    ],
    transformations: [],
    action: { kind: 'collect' },
  });
  // One task each (a core each): executor 2's is sent after the files it needs.
  const [task] = await b.endpoint.launchedAtLeast(1);
  assert.equal(task?.files, 2);
  assert.deepEqual(b.endpoint.received.slice(0, 2), ['AddFiles', 'LaunchTask']);
  const [, other] = await a.endpoint.launchedAtLeast(2);
  for (const [mock, id, t] of [
    [b, '2', task],
    [a, '1', other],
  ] as const) {
    mock.driver.send(
      StatusUpdate({ executorId: id, taskId: t?.taskId as number, state: 'FINISHED', result: [] }),
    );
  }
  assert.equal((await done).length, 2);
  // Executor 1 was told of f2 alone, when it was added.
  assert.deepEqual(a.endpoint.addedFiles, [[f1], [f2]]);
});

/** An AppConfig asked for by a new connection (as executor 2 does before it registers). */
async function a2Config() {
  const e = await Env.create({ protocol: testProtocol, name: 'earlyExecutor', clientMode: true });
  mockEnvs.push(e);
  const ref = await e.setupEndpointRefByURI(driverUrl);
  return ref.ask(RetrieveAppConfig({}));
}
