/**
 * The master's state as clients see it: a subscription that stays equal to a fresh snapshot
 * through every kind of change, BoundPortsRequest, the web UI's Spark-shaped /json, and
 * `wick status`.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MasterStateMirror } from '../../backend/client/MasterStateMirror.js';
import {
  RequestKillApplication,
  RequestKillDriver,
  RequestSubmitDriver,
} from '../../backend/protocol/client.js';
import { BoundPortsRequest } from '../../backend/protocol/deploy.js';
import {
  MasterStateEvent,
  MasterStateResponse,
  SubscribeMasterState,
} from '../../backend/protocol/state.js';
import { RpcEndpoint, RpcEnv } from '../../backend/rpc/index.js';
import { startMaster, startWorker, wick } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appDescription,
  appIn,
  connectClient,
  driverIn,
  type MasterState,
  MockApp,
  MockWorker,
  Recorder,
  workerIn,
} from '../helpers/masterMocks.js';
import { testProtocol } from '../helpers/protocol.js';
import { assertSparkMasterJson } from '../helpers/sparkJson.js';
import { uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

/** Waits until the mirror has caught up with a fresh snapshot, then checks they are equal. */
async function assertMirrorEqualsSnapshot(client: Awaited<ReturnType<typeof connectClient>>) {
  const fresh = await client.state();
  const mirrored = await client.waitFor((s) => s.seq >= fresh.seq);
  assert.deepEqual(mirrored, fresh);
}

test('SubscribeMasterState: a snapshot, then events after which the mirror equals a fresh snapshot', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  // A second subscriber beside the mirror records the events as they come.
  const pushes = new Recorder();
  client.env.setupEndpoint('Pushes', pushes);
  const { seq: firstSeq } = await client.master.ask(
    SubscribeMasterState({ subscriber: pushes.self.toData() }),
  );
  const first = structuredClone(client.mirror.state as MasterState);
  assert.equal(first.status, 'ALIVE');
  assert.equal(first.url, master.url);
  assert.equal(first.webUiUrl, master.webUiUrl);
  assert.deepEqual(first.workers, []);

  // Workers join; an app gets executors that change state; a driver is submitted and killed.
  const w1 = await MockWorker.start(t, master.url, { cores: 2, memory: 2048 });
  const w2 = await MockWorker.start(t, master.url, { cores: 2, memory: 2048 });
  for (const w of [w1, w2]) await w.registerAndWait();
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ maxCores: 2, memoryPerExecutorMB: 256 }));
  const launch = await w1.endpoint.next('LaunchExecutor');
  w1.executorStateChanged(appId, launch.execId as number, 'RUNNING');
  await client.waitFor(
    (s) => appIn(s, appId)?.executors.some((e) => e.state === 'RUNNING') ?? false,
  );
  await assertMirrorEqualsSnapshot(client);

  const sub = await client.master.ask(
    RequestSubmitDriver({
      driverDescription: {
        appPath: '/tmp/x.js',
        mem: 128,
        cores: 1,
        supervise: false,
        command: { argv: ['node'], env: {} },
      },
    }),
  );
  const driverId = sub.driverId as string;
  // The worker hears of it on its own connection, maybe after the mirror does.
  const holder = await Promise.race(
    [w1, w2].map((w) => w.endpoint.next('LaunchDriver').then(() => w)),
  );
  await client.waitFor((s) => driverIn(s, driverId)?.state === 'RUNNING');
  await client.master.ask(RequestKillDriver({ driverId }));
  await holder.endpoint.next('KillDriver');
  holder.driverStateChanged(driverId, 'KILLED');
  await client.waitFor((s) => driverIn(s, driverId)?.state === 'KILLED');
  await assertMirrorEqualsSnapshot(client);

  // A worker dies (executor LOST), the app is killed, another app registers and unregisters.
  await w1.stop();
  await client.waitFor((s) => workerIn(s, w1.id)?.state === 'DEAD');
  await client.master.ask(RequestKillApplication({ appId }));
  const other = await MockApp.start(t, master.url);
  const otherId = await other.register();
  other.unregister();
  await client.waitFor((s) => appIn(s, otherId)?.state === 'FINISHED');
  await assertMirrorEqualsSnapshot(client);

  // Each event is valid, and numbered one after the other.
  const events = pushes.all('MasterStateEvent');
  assert.ok(events.length > 5, `only ${events.length} events`);
  const seqs = events.map((e) => e.seq as number);
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => (seqs[0] as number) + i),
  );
  for (const e of events) assert.ok(MasterStateEvent.check.Check(e), JSON.stringify(e));
  assert.equal(seqs[0], firstSeq + 1, 'the first event follows the snapshot');
});

test('UnsubscribeMasterState stops the pushes', { timeout: 60_000 }, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url);
  await w.registerAndWait();
  await client.waitFor((s) => s.workers.length === 1);
  client.mirror.unsubscribe(client.master);
  const seq = (client.mirror.state as MasterState).seq;
  const app = await MockApp.start(t, master.url);
  await app.register();
  const fresh = await client.state();
  assert.ok(fresh.seq > seq);
  assert.equal((client.mirror.state as MasterState).seq, seq, 'no event after unsubscribing');
});

test('BoundPortsRequest answers the RPC and web UI ports', { timeout: 60_000 }, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const r = await client.master.ask(BoundPortsRequest({}));
  assert.equal(r.rpcEndpointPort, master.port);
  assert.equal(r.webUIPort, Number(new URL(master.webUiUrl).port));
});

test("GET /json on the web UI port and `wick status --json` use Spark's field names", {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const worker = await startWorker(t, master.url, { cores: 2, memory: '768m' });
  await client.waitFor((s) => workerIn(s, worker.workerId)?.state === 'ALIVE');
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ name: 'json-app', memoryPerExecutorMB: 5000 }));

  const res = await uiFetch(`${master.webUiUrl}/json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const json = (await res.json()) as Record<string, unknown>;
  assertSparkMasterJson(json);
  assert.equal(json.url, master.url);
  assert.equal(json.status, 'ALIVE');
  assert.equal(json.aliveworkers, 1);
  assert.equal(json.cores, 2);
  assert.equal(json.memory, 768);
  assert.equal(json.coresused, 0);
  const [w] = json.workers as Record<string, unknown>[];
  for (const key of [
    'id',
    'host',
    'port',
    'cores',
    'coresused',
    'memory',
    'memoryused',
    'state',
    'lastheartbeat',
  ]) {
    assert.ok(w && key in w, `/json worker lacks ${key}`);
  }
  assert.equal(w?.id, worker.workerId);
  assert.equal(w?.state, 'ALIVE');
  assert.equal(`${w?.host}:${w?.port}`, worker.address);
  assert.equal(typeof w?.lastheartbeat, 'number');
  const [a] = json.activeapps as Record<string, unknown>[];
  assert.equal(a?.id, appId);
  assert.equal(a?.name, 'json-app');
  assert.equal(a?.state, 'WAITING');
  assert.equal(a?.memoryperexecutor, 5000);

  const status = await wick(['status', '--master', master.url, '--json']);
  assert.equal(status.code, 0, status.stderr);
  const cli = JSON.parse(status.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(cli).sort(), Object.keys(json).sort());
  assert.equal(cli.aliveworkers, 1);
  assert.deepEqual(
    (cli.workers as { id: string }[]).map((x) => x.id),
    [worker.workerId],
  );

  const text = await wick(['status', '--master', master.url]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`Master ${master.url} \\(ALIVE\\)`));
  assert.match(text.stdout, new RegExp(`${worker.workerId} .* ALIVE`));
  assert.match(text.stdout, /json-app\s+WAITING/);

  const missing = await uiFetch(`${master.webUiUrl}/nothing-here`);
  assert.equal(missing.status, 404);
  await missing.text();
});

/** A master that pushes an event right behind its reply to SubscribeMasterState. */
class EagerMaster extends RpcEndpoint {
  constructor() {
    super();
    this.on(SubscribeMasterState, ({ subscriber }, ctx) => {
      ctx.reply(
        MasterStateResponse({
          url: 'wick://127.0.0.1:1',
          webUiUrl: 'http://127.0.0.1:2',
          status: 'RECOVERING',
          workers: [],
          activeApps: [],
          completedApps: [],
          activeDrivers: [],
          completedDrivers: [],
          seq: 1,
        }),
      );
      const ref = this.rpcEnv.endpointRef(subscriber);
      ref.send(MasterStateEvent({ seq: 2, status: 'COMPLETING_RECOVERY' }));
      ref.send(MasterStateEvent({ seq: 3, status: 'ALIVE' }));
      return undefined;
    });
  }
}

test('a mirror loses no event that overtakes the reply to its subscription', {
  timeout: 10_000,
}, async (t) => {
  const server = await RpcEnv.create({ protocol: testProtocol, name: 'eagerMaster' });
  t.after(() => server.stop());
  server.setupEndpoint('Master', new EagerMaster());
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'mirrorClient',
    clientMode: true,
  });
  t.after(() => env.stop());
  const mirror = new MasterStateMirror();
  env.setupEndpoint('StateMirror', mirror);
  await mirror.subscribe(await env.setupEndpointRef(server.address, 'Master'));
  const s = await mirror.waitFor((s) => s.seq === 3);
  assert.equal(s.status, 'ALIVE');
});
