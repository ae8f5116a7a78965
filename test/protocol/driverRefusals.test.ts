/**
 * "What a driver refuses" (docs/protocol.md) against a driver's endpoints as WickContext sets them
 * up — DriverEndpoint and AppClient on a real RpcEnv that lets in its applications' keys — with
 * raw peers on the wire and two masters of its own: every case of the table is provoked, and each
 * answer must match the row of its situation, word for word but for the `<…>` values; a row that
 * no case matches fails too, so the table can neither miss a refusal nor keep a stale one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { AppClient } from '../../backend/app/driver/AppClient.js';
import { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import {
  ExecutorAdded,
  RegisterApplication,
  RegisteredApplication,
} from '../../backend/protocol/app.js';
import { RpcError } from '../../backend/protocol/errors.js';
import { AppKeyRing, clusterKeyRing, deriveKey } from '../../backend/rpc/credentials.js';
import { RpcEndpoint, type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { appDescription } from '../helpers/masterMocks.js';
import { RawClient, type RawFrame } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

import '../../backend/conf/all.js';

const SECRET = 'driver-refusals-test-secret';
const APP = 'app-20261206000000-0000';
const OTHER_APP = 'app-20261206000000-0001';
const appKey = (id: string) => deriveKey(SECRET, 'app', id);

/** The table's rows: code (or the reply's type) and the message's pattern. */
interface Row {
  situation: string;
  code: string;
  pattern: RegExp;
}

function documentedRows(): Row[] {
  const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
  const start = doc.indexOf('### What a driver refuses');
  assert.ok(start >= 0, 'docs/protocol.md has no "What a driver refuses"');
  const section = doc.slice(start, doc.indexOf('\n## ', start));
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const m = /^\| (.+?) \| (?:reply )?`([^`]+)` \| `([^`]+)`/.exec(line);
    if (!m) continue;
    const [, situation, code, text] = m as unknown as [string, string, string, string];
    const pattern = text
      .split(/<[^>]+>/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.+?');
    rows.push({ situation, code, pattern: new RegExp(`^${pattern}$`) });
  }
  assert.ok(rows.length >= 10, `only ${rows.length} rows read from the table`);
  return rows;
}

/** What a case got: an error's code and message, or a reply's type and message. */
interface Outcome {
  what: string;
  code: string;
  message: string;
}

const outcomes: Outcome[] = [];

function noteFrame(what: string, f: RawFrame): void {
  if (f.error) {
    outcomes.push({ what, code: String(f.error.code), message: f.error.message });
    return;
  }
  const r = f.result as { type?: string; message?: string } | undefined;
  assert.ok(r?.type && r.message !== undefined, `${what}: no refusal in ${JSON.stringify(f)}`);
  outcomes.push({ what, code: r.type, message: r.message });
}

async function noteRejection(what: string, p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof RpcError, `${what}: ${String(err)}`);
    outcomes.push({ what, code: String(err.code), message: err.message });
    return;
  }
  assert.fail(`${what} was not refused`);
}

/** A master of the driver's: it keeps the ref to the driver over the connection the driver dialled. */
class FakeMaster extends RpcEndpoint {
  driver: RpcEndpointRef | undefined;
  constructor(private readonly accept: boolean) {
    super();
    this.on(RegisterApplication, (m, ctx) => {
      this.driver = this.rpcEnv.refOver(
        ctx.connection as NonNullable<typeof ctx.connection>,
        m.driver.name,
      );
      if (this.accept)
        this.driver.send(
          RegisteredApplication({ appId: APP, master: this.self.toData(), appKey: appKey(APP) }),
        );
    });
  }
}

const envs: RpcEnv[] = [];
let driverEnv: RpcEnv;
let driver: DriverEndpoint;
let masters: { env: RpcEnv; endpoint: FakeMaster }[];

async function masterEnv(accept: boolean) {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'fakeMaster',
    host: '127.0.0.1',
    port: 0,
    auth: { credential: { kind: 'cluster', key: SECRET }, keys: clusterKeyRing(SECRET) },
  });
  envs.push(env);
  const endpoint = new FakeMaster(accept);
  env.setupEndpoint('Master', endpoint);
  return { env, endpoint };
}

before(async () => {
  masters = [await masterEnv(true), await masterEnv(false)];
  const keys = new AppKeyRing();
  driverEnv = await RpcEnv.create({
    protocol: testProtocol,
    name: 'driver',
    host: '127.0.0.1',
    port: 0,
    auth: { credential: { kind: 'cluster', key: SECRET }, keys },
  });
  envs.push(driverEnv);
  const conf = new WickConf().set('wick.app.name', 'refusals');
  driver = new DriverEndpoint(conf, '/apps/here', 3, undefined, { files: [] });
  driverEnv.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver);
  const client = new AppClient(
    masters.map((m) => m.env.address),
    appDescription(),
    {
      connected: (appId, key) => {
        if (key) keys.add(appId, key);
        driver.applicationRegistered(appId);
      },
      executorAdded: () => {},
      executorRemoved: () => {},
      dead: () => {},
    },
  );
  driverEnv.setupEndpoint(AppClient.ENDPOINT_NAME, client);
  await client.register(10_000);
  // Another application of the same driver env, whose key therefore gets in.
  keys.add(OTHER_APP, appKey(OTHER_APP));
});

after(async () => {
  await Promise.all(envs.map((e) => e.stop()));
});

let peers = 0;

/** A raw peer that proved `credential` (its answer to the handshake, when refused). */
async function peer(
  credential: { kind: 'app' | 'submission'; id: string; key: string } | 'cluster' | 'none',
): Promise<{ raw: RawClient; from: string; refused?: RawFrame }> {
  const raw = await RawClient.connect(driverEnv.address);
  after(() => raw.close());
  const from = `client-refusals${++peers}`;
  const answer =
    credential === 'none'
      ? await raw.call('wick.hello', { version: 1, from })
      : credential === 'cluster'
        ? await raw.authHello(from, SECRET)
        : await raw.authHello(from, credential.key, { kind: credential.kind, id: credential.id });
  return answer.error ? { raw, from, refused: answer } : { raw, from };
}

const app = (id: string, key = appKey(id)) => ({ kind: 'app' as const, id, key });
const scheduler = DriverEndpoint.ENDPOINT_NAME;

function registerExecutor(p: { raw: RawClient; from: string }, executorId: string) {
  return p.raw.ask(p.from, scheduler, {
    type: 'RegisterExecutor',
    executorId,
    executor: { address: p.from, name: 'Executor' },
    hostname: '127.0.0.1',
    cores: 1,
    logUrls: {},
  });
}

test('every refusal of the table is what the driver answers, and every row is one of them', {
  timeout: 60_000,
}, async () => {
  // The handshake.
  for (const [what, credential] of [
    ['hello without nonce', 'none'],
    ['the cluster secret', 'cluster'],
    [
      'a submission key',
      {
        kind: 'submission',
        id: 'submission-1',
        key: deriveKey(SECRET, 'submission', 'submission-1'),
      },
    ],
    ['an unknown application key', app('app-20261206000000-0099')],
  ] as const) {
    const { refused } = await peer(credential);
    assert.ok(refused, `${what} got in`);
    noteFrame(what, refused);
  }
  const forger = await RawClient.connect(driverEnv.address);
  after(() => forger.close());
  noteFrame(
    'a wrong proof',
    await forger.authHello('client-forger', 'f'.repeat(64), { kind: 'app', id: APP }, true),
  );

  // Registration.
  const one = await peer(app(APP));
  assert.equal((await registerExecutor(one, '1')).result?.type, 'RegisteredExecutor');
  const two = await peer(app(APP));
  noteFrame('a duplicate executor id', await registerExecutor(two, '1'));
  assert.equal((await registerExecutor(two, '2')).result?.type, 'RegisteredExecutor');
  const other = await peer(app(OTHER_APP));
  noteFrame('another application’s executor', await registerExecutor(other, '3'));

  // Status updates: a task launched on executor 1 (the first with a free core).
  const job = driver.runJob({
    sources: [{ kind: 'array', data: [1] }],
    transformations: [],
    action: { kind: 'collect' },
  });
  job.catch(() => {});
  const launch = await one.raw.take((f) => f.method === 'LaunchTask');
  const taskId = (launch.params as { message: { task: { taskId: number } } }).message.task.taskId;
  const update = (executorId: string) => ({
    type: 'StatusUpdate',
    executorId,
    taskId,
    state: 'RUNNING',
  });
  noteFrame('another connection’s executor', await two.raw.ask(two.from, scheduler, update('1')));
  noteFrame('a task of another executor', await two.raw.ask(two.from, scheduler, update('2')));
  noteFrame('its own status update as an ask', await one.raw.ask(one.from, scheduler, update('1')));
  noteFrame(
    'a client’s message',
    await one.raw.ask(one.from, scheduler, { type: 'RequestMasterState' }),
  );
  noteFrame(
    'an unhandled message',
    await one.raw.ask(one.from, scheduler, { type: 'CheckExistence', name: 'x' }),
  );

  // The master-facing endpoint.
  const added = {
    type: 'ExecutorAdded',
    id: 0,
    workerId: 'worker-1',
    hostPort: '127.0.0.1:1',
    cores: 1,
    memory: 64,
  };
  noteFrame(
    'a master message over an inbound connection',
    await one.raw.ask(one.from, AppClient.ENDPOINT_NAME, added),
  );
  const notFollowed = masters[1]?.endpoint.driver;
  assert.ok(notFollowed, 'the second master heard RegisterApplication');
  await noteRejection(
    'a master the application does not follow',
    notFollowed.ask(
      ExecutorAdded({ id: 0, workerId: 'worker-1', hostPort: '127.0.0.1:1', cores: 1, memory: 64 }),
    ),
  );
  const changed = (address: string) => ({
    type: 'MasterChanged',
    master: { address, name: 'Master' },
    masterWebUiUrl: 'http://127.0.0.1:8080',
  });
  noteFrame(
    'MasterChanged naming a stranger',
    await one.raw.ask(one.from, AppClient.ENDPOINT_NAME, changed('127.0.0.1:1')),
  );
  noteFrame(
    'MasterChanged proving another application’s key',
    await other.raw.ask(
      other.from,
      AppClient.ENDPOINT_NAME,
      changed(masters[0]?.env.address as string),
    ),
  );

  const rows = documentedRows();
  const unmatched = outcomes.filter(
    (o) => !rows.some((r) => r.code === o.code && r.pattern.test(o.message)),
  );
  assert.deepEqual(unmatched, [], 'answers docs/protocol.md does not list');
  const unused = rows
    .filter((r) => !outcomes.some((o) => r.code === o.code && r.pattern.test(o.message)))
    .map((r) => r.situation);
  assert.deepEqual(unused, [], 'rows of docs/protocol.md no case produced');
});
