/**
 * local[N]: the executors inside the driver's process (this test's), no master, no worker. A
 * job with a shuffle gives the answer computed here in plain JavaScript, its tasks ran in this
 * process, and only the application's own executors may connect to its driver.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { WickContext } from '../../../backend/app/index.js';
import { DRIVER_ENDPOINT } from '../../../backend/protocol/endpoints.js';
import { wickProtocol } from '../../../backend/protocol/index.js';
import { RpcEnv } from '../../../backend/rpc/index.js';
import { eventually } from '../../helpers/apps.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

let wc: WickContext;
const driver = () => (wc as unknown as { driver: DriverEndpoint }).driver;
const driverEnv = () => (wc as unknown as { env: RpcEnv }).env;

before(async () => {
  wc = await WickContext.create({ master: 'local[2]', appName: 'in-process under test' });
});

after(async () => {
  await wc?.stop();
});

const TEXT = [
  'the quick brown fox jumps over the lazy dog',
  'the dog barks and the fox runs',
  'a lazy afternoon for a quick nap',
  'over and over the brown dog sleeps',
];

test('a word count with a shuffle gives the plain computation’s answer', async () => {
  const expected = new Map<string, number>();
  for (const line of TEXT)
    for (const w of line.split(' ')) expected.set(w, (expected.get(w) ?? 0) + 1);
  const counts = await wc
    .parallelize(TEXT, 3)
    .flatMap((line: string) => line.split(' '))
    .map((w: string) => [w, 1] as [string, number])
    .reduceByKey((a: number, b: number) => a + b, 3)
    .sortByKey()
    .collect();
  assert.deepEqual(
    counts,
    [...expected.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  assert.match(wc.appId, /^local-\d+$/);
  assert.deepEqual([...driver().executors.keys()].sort(), ['0', '1']);
});

test("every task runs in the driver's process", async () => {
  const pids = await wc
    .parallelize([1, 2, 3, 4, 5, 6], 6)
    .map(() => process.pid)
    .collect();
  assert.deepEqual(new Set(pids), new Set([process.pid]));
});

test('a task function reads its own partition on wickTaskContext (Spark’s TaskContext)', async () => {
  const seen = await wc
    .parallelize(['a', 'b', 'c', 'd', 'e', 'f'], 3)
    .map(
      (x: string) =>
        `${x}${(globalThis as { wickTaskContext?: { partitionId: number } }).wickTaskContext?.partitionId}`,
    )
    .collect();
  assert.deepEqual(seen, ['a0', 'b0', 'c1', 'd1', 'e2', 'f2']);
});

test("a connection without the application's key cannot reach the driver", async () => {
  const url = `wick://${driverEnv().address}/${DRIVER_ENDPOINT}`;
  for (const credential of [
    undefined,
    { kind: 'app' as const, id: wc.appId, key: '00'.repeat(32) },
  ]) {
    const rogue = await RpcEnv.create({
      protocol: wickProtocol,
      name: 'rogue',
      clientMode: true,
      auth: { credential, keys: undefined },
    });
    try {
      await assert.rejects(rogue.setupEndpointRefByURI(url), /key|credential|refused|auth/i);
    } finally {
      await rogue.stop();
    }
  }
  // Still serving its own executors after refusing the others.
  assert.equal(await wc.parallelize([1, 2, 3], 2).count(), 3);
});

test('stop ends the executors and removes their files', async () => {
  const workDir = (
    (wc as unknown as { client: { workDir?: string } }).client as { workDir?: string }
  ).workDir;
  assert.ok(workDir && existsSync(workDir), `the executors' folder ${workDir}`);
  await wc.stop();
  assert.equal(driver().executors.size, 0);
  await eventually(AbortSignal.timeout(30_000), () => (existsSync(workDir) ? undefined : true));
});
