/**
 * WickContext.create's start-up checks (Spark's SparkContext: "A master URL must be set…"), and
 * registration failures: no master reachable, or none that accepts applications (a STANDBY
 * master, played by an endpoint of this process that answers RequestMasterState and ignores
 * RegisterApplication, as Spark's standby master does).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WickContext } from '../../../backend/app/index.js';
import { RegisterApplication } from '../../../backend/protocol/app.js';
import { RpcEnv } from '../../../backend/rpc/index.js';
import { MockMaster } from '../../helpers/mockMaster.js';
import { unusedPort } from '../../helpers/net.js';
import { testProtocol } from '../../helpers/protocol.js';

const saved: Record<string, string | undefined> = {};
before(() => {
  for (const k of ['WICK_MASTER', 'WICK_APP_NAME', 'WICK_SUBMIT_CONF', 'WICK_APP_DIR']) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
});
after(() => {
  for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
});

test('a missing master URL fails fast, saying where one can be set', async () => {
  await assert.rejects(WickContext.create({ appName: 'x' }), {
    message:
      'A master URL must be set in your configuration: pass { master }, set wick.master, or run it with wick submit --master URL (or WICK_MASTER)',
  });
});

test('a missing application name fails fast', async () => {
  await assert.rejects(WickContext.create({ master: 'wick://127.0.0.1:1' }), {
    message:
      'An application name must be set in your configuration: pass { appName } or set wick.app.name',
  });
});

test('the master and the name may come from the environment and the configuration', async () => {
  const port = await unusedPort();
  process.env.WICK_MASTER = `wick://127.0.0.1:${port}`;
  try {
    // Past both checks: it fails only on reaching the master.
    await assert.rejects(WickContext.create({ conf: { 'wick.app.name': 'from conf' } }), {
      message: new RegExp(`^Cannot reach a master\\. Tried:\\n  wick://127\\.0\\.0\\.1:${port}: `),
    });
  } finally {
    delete process.env.WICK_MASTER;
  }
});

test('a bad setting is refused before anything connects, quoting the value', async () => {
  await assert.rejects(
    WickContext.create({
      master: 'wick://127.0.0.1:1',
      appName: 'x',
      conf: { 'wick.executor.memory': 'plenty' },
    }),
    /wick\.executor\.memory.*plenty/,
  );
  await assert.rejects(
    WickContext.create({ master: 'localhost:7077', appName: 'x' }),
    /localhost:7077/,
    'a master URL that is not wick://host:port',
  );
});

test('no master reachable: every URL tried is listed with why', async () => {
  const [p1, p2] = [await unusedPort(), await unusedPort()];
  const err = await WickContext.create({
    master: `wick://127.0.0.1:${p1},127.0.0.1:${p2}`,
    appName: 'x',
  }).then(
    () => assert.fail('should not connect'),
    (e: Error) => e,
  );
  assert.match(
    err.message,
    new RegExp(
      `^Cannot reach a master\\. Tried:\\n  wick://127\\.0\\.0\\.1:(${p1}|${p2}): .+\\n  wick://127\\.0\\.0\\.1:(${p1}|${p2}): .+\\nIs a master running\\? Start one with \`wick master\` or \`wick local-cluster\`\\.$`,
    ),
  );
  assert.ok(err.message.includes(`:${p1}:`) && err.message.includes(`:${p2}:`));
});

/** A master that is not ALIVE: it answers state queries and ignores registrations. */
class StandbyMaster extends MockMaster {
  registrations = 0;

  constructor(url: string) {
    super('STANDBY', url);
    this.on(RegisterApplication, () => {
      this.registrations++;
    });
  }
}

test('a master that is not ALIVE: registration gives up after wick.app.registrationTimeout, saying so', async (t) => {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'standbyMaster' });
  t.after(() => env.stop());
  const url = `wick://${env.address}`;
  const master = new StandbyMaster(url);
  env.setupEndpoint('Master', master);
  const closed = await unusedPort();
  const err = await WickContext.create({
    master: `${url},127.0.0.1:${closed}`,
    appName: 'x',
    conf: { 'wick.app.registrationTimeout': '200ms' },
  }).then(
    () => assert.fail('should not register'),
    (e: Error) => e,
  );
  assert.equal(master.registrations, 1);
  assert.match(err.message, /^No master accepted the application\. Masters:\n/);
  assert.ok(
    err.message.includes(`${env.address}: STANDBY (only an ALIVE master accepts applications)`),
    err.message,
  );
  assert.match(
    err.message,
    new RegExp(`wick://127\\.0\\.0\\.1:${closed}: `),
    'the one unreachable too',
  );
});
