/**
 * The mirror against a master endpoint in an RpcEnv on port 0 that answers in pages of one worker
 * and pushes changes between them, as a master of a big cluster does: the mirror reads every page,
 * keeps the changes that crossed them, and subscribes again when the master says it dropped it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MasterStateMirror } from '../../backend/client/MasterStateMirror.js';
import type { MasterState } from '../../backend/client/masterConnection.js';
import { MASTER_ENDPOINT } from '../../backend/protocol/endpoints.js';
import type { WorkerSummary } from '../../backend/protocol/state.js';
import {
  MasterStateEvent,
  MasterStateResponse,
  MasterStateSubscriptionDropped,
  RequestMasterState,
  SubscribeMasterState,
} from '../../backend/protocol/state.js';
import { RpcEndpoint, type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { testProtocol } from '../helpers/protocol.js';
import { within } from '../helpers/within.js';

const worker = (i: number, lastHeartbeat = 0): WorkerSummary => ({
  id: `w${i}`,
  host: 'h',
  port: i + 1,
  webUiAddress: '',
  cores: 1,
  coresUsed: 0,
  memory: 1,
  memoryUsed: 0,
  state: 'ALIVE',
  lastHeartbeat,
  executors: [],
  driverIds: [],
});

/** Answers one worker per page; `between` runs after each page is answered. */
class PagingMaster extends RpcEndpoint {
  workers = [worker(0), worker(1), worker(2)];
  seq = 0;
  subscriber: RpcEndpointRef | undefined;
  subscriptions = 0;
  between: (page: number) => void = () => {};

  constructor() {
    super();
    this.on(SubscribeMasterState, (m) => {
      this.subscriber = this.rpcEnv.endpointRef(m.subscriber);
      this.subscriptions++;
      return this.page(0);
    });
    this.on(RequestMasterState, (m) => this.page(Number(m.after?.slice(2) ?? 0)));
  }

  push(fields: Omit<Parameters<typeof MasterStateEvent>[0], 'seq'>): void {
    for (const w of fields.workers ?? []) {
      const i = this.workers.findIndex((x) => x.id === w.id);
      if (i >= 0) this.workers[i] = w;
      else this.workers.push(w);
    }
    for (const id of fields.removedWorkers ?? []) {
      this.workers = this.workers.filter((w) => w.id !== id);
    }
    this.subscriber?.send(MasterStateEvent({ ...fields, seq: ++this.seq }));
  }

  private page(from: number) {
    const answer = MasterStateResponse({
      url: 'wick://m:1',
      webUiUrl: 'http://m:2',
      status: 'ALIVE',
      workers: this.workers.slice(from, from + 1),
      activeApps: [],
      completedApps: [],
      activeDrivers: [],
      completedDrivers: [],
      seq: this.seq,
      ...(from + 1 < this.workers.length ? { next: `w:${from + 1}` } : {}),
    });
    // After the answer is on its way: a change made while the client reads the next page.
    queueMicrotask(() => this.between(from));
    return answer;
  }
}

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const masterEnv = await RpcEnv.create({ protocol: testProtocol, name: 'pm', port: 0 });
  const master = new PagingMaster();
  const ref = masterEnv.setupEndpoint(MASTER_ENDPOINT, master);
  const clientEnv = await RpcEnv.create({ protocol: testProtocol, name: 'c', clientMode: true });
  t.after(async () => {
    await clientEnv.stop();
    await masterEnv.stop();
  });
  const mirror = new MasterStateMirror();
  clientEnv.setupEndpoint('Mirror', mirror);
  const remote = await clientEnv.setupEndpointRef(ref.address, MASTER_ENDPOINT);
  return { master, mirror, remote };
}

const beats = (s: MasterState) => Object.fromEntries(s.workers.map((w) => [w.id, w.lastHeartbeat]));

test('the snapshot is read page by page, with the changes pushed meanwhile', async (t) => {
  const { master, mirror, remote } = await setup(t);
  master.between = (page) => {
    if (page === 0) {
      master.push({ workers: [worker(0, 5)] }); // listed already: the change applies
      master.push({ workers: [worker(2, 6)] }); // listed later, by a page that includes it
    }
    if (page === 1) master.push({ removedWorkers: ['w1'], workers: [worker(3, 7)] });
  };
  const snapshot = await mirror.subscribe(remote);
  assert.ok(mirror.ready);
  await within(
    5000,
    mirror.waitFor((s) => s.seq >= 3),
    'the changes',
  );
  assert.deepEqual(beats(snapshot), { w0: 5, w2: 6, w3: 7 });
  assert.deepEqual(
    beats(mirror.state as MasterState),
    beats({ workers: master.workers } as MasterState),
  );
  // Later changes apply as usual.
  master.between = () => {};
  master.push({ workers: [worker(0, 9)] });
  await within(
    5000,
    mirror.waitFor((s) => s.workers.find((w) => w.id === 'w0')?.lastHeartbeat === 9),
    'a later change',
  );
});

test('told it was dropped, the mirror subscribes again and its state is afresh', async (t) => {
  const { master, mirror, remote } = await setup(t);
  await mirror.subscribe(remote);
  assert.equal(master.subscriptions, 1);
  // Changes the mirror never heard of (as if dropped while they were pushed), then the notice.
  master.workers = [worker(7, 1)];
  master.subscriber?.send(MasterStateSubscriptionDropped({ reason: 'fell behind' }));
  await within(
    5000,
    mirror.waitFor((s) => s.workers.length === 1 && s.workers[0]?.id === 'w7'),
    'the state read again',
  );
  assert.equal(master.subscriptions, 2);
});
