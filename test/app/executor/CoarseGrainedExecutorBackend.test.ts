/**
 * The executor's endpoint against a real DriverEndpoint, both on RpcEnvs of this process: how it
 * ends when the driver stops it. Its task threads are a stand-in whose teardown the test releases,
 * so that the order of the connection's close and the threads' end shows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { CoarseGrainedExecutorBackend } from '../../../backend/app/executor/CoarseGrainedExecutorBackend.js';
import type { TaskPool } from '../../../backend/app/executor/taskPool.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { RpcEnv } from '../../../backend/rpc/index.js';
import { waitFor } from '../../helpers/processes.js';
import { within } from '../../helpers/within.js';

import '../../../backend/conf/all.js';
import { testProtocol } from '../../helpers/protocol.js';

/** Task threads that end only when the test says so. */
function heldPool(): { pool: TaskPool; destroyed: () => boolean; release: () => void } {
  let release!: () => void;
  const ended = new Promise<void>((r) => {
    release = r;
  });
  let destroyed = false;
  const pool = {
    addsChannel: `wick-test-adds-${process.pid}`,
    on: () => pool,
    off: () => pool,
    destroy: () => {
      destroyed = true;
      return ended;
    },
  } as unknown as TaskPool;
  return { pool, destroyed: () => destroyed, release };
}

test('a stopped executor closes its connection to the driver before its task threads have ended, and exits after they have', async () => {
  const conf = new WickConf().set('wick.app.name', 'executor backend test');
  const driverEnv = await RpcEnv.create({ protocol: testProtocol, name: 'testDriver', conf });
  const executorEnv = await RpcEnv.create({
    protocol: testProtocol,
    name: 'testExecutor',
    clientMode: true,
  });
  const threads = heldPool();
  try {
    const driver = new DriverEndpoint(conf, '/apps/here', 3);
    driver.applicationRegistered('app-20260101000000-0000');
    const driverUrl = driverEnv.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver).toString();
    const exits: number[] = [];
    let envStopped = false;
    let exited = false;
    // As `wick executor` ends its process (backend/cli/commands/executor.ts).
    const backend: CoarseGrainedExecutorBackend = new CoarseGrainedExecutorBackend({
      driverUrl,
      executorId: '7',
      hostname: '127.0.0.1',
      cores: 1,
      appId: driver.appId,
      pool: threads.pool,
      exit: (code) => {
        exits.push(code);
        void executorEnv
          .stop()
          .then(() => {
            envStopped = true;
            return backend.threadsStopped();
          })
          .then(() => {
            exited = true;
          });
      },
    });
    executorEnv.setupEndpoint(CoarseGrainedExecutorBackend.ENDPOINT_NAME, backend);
    await within(5_000, driver.whenExecutorRegistered(), 'the executor to register');
    assert.equal(driver.totalCores, 1);

    driver.stopExecutors();
    // The driver loses the executor when its connection closes: the threads are still ending.
    await waitFor(
      'the driver to see the executor’s connection close',
      () => driver.totalCores === 0,
      5_000,
    );
    assert.deepEqual(exits, [0]);
    assert.ok(threads.destroyed(), 'the threads were told to end');
    // The exit path has stopped the RpcEnv and asked for the threads: all it waits on now is them.
    // Had threadsStopped() not waited for them, `exited` would be set in this turn's microtasks,
    // before the next one begins.
    await waitFor('the executor’s RpcEnv to stop', () => envStopped, 5_000);
    await new Promise((r) => setImmediate(r));
    assert.equal(exited, false, 'the process must not exit before its task threads have ended');

    threads.release();
    await waitFor('the exit path to finish', () => exited, 5_000);
  } finally {
    threads.release();
    await executorEnv.stop();
    await driverEnv.stop();
  }
});
