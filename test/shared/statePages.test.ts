/**
 * StatePages against the master's own tables: a ClusterState changes while a client reads it in
 * pages, every change pushed as the StateBroadcaster would (numbered, after the page that was
 * answered before it); whatever the order, the client ends with exactly the master's state.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ApplicationInfo } from '../../backend/master/ApplicationInfo.js';
import { ClusterState } from '../../backend/master/ClusterState.js';
import { WorkerInfo } from '../../backend/master/WorkerInfo.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import type { MessageOf } from '../../backend/protocol/registry.js';
import {
  formatStateCursor,
  type MasterStateEvent,
  type MasterStateResponse,
  parseStateCursor,
  type StatePosition,
} from '../../backend/protocol/state.js';
import { type RefTransport, RpcEndpointRef } from '../../backend/rpc/RpcEndpointRef.js';
import { StatePages } from '../../backend/shared/statePages.js';
import { appDescription } from '../helpers/masterMocks.js';

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

const nowhere: RefTransport = {
  send: () => {},
  ask: () => assert.fail('nothing asks'),
  flush: () => {},
  protocol: wickProtocol,
};

/**
 * A master's tables, its change counter, and the events it pushed: each change the tables
 * announce goes out as its own event (the StateBroadcaster gathers a message's changes in one).
 */
class Model {
  readonly cluster = new ClusterState({
    retainedApplications: 4,
    retainedDrivers: 4,
    listener: {
      worker: (w) => this.push({ workers: [w.summary()] }),
      workerHeartbeat: (w) => this.push({ workers: [w.summary()] }),
      app: (a) => this.push({ apps: [a.summary()] }),
      driver: (d) => this.push({ drivers: [d.summary()] }),
      workerRemoved: (id) => this.push({ removedWorkers: [id] }),
      appRemoved: (id) => this.push({ removedApps: [id] }),
      driverRemoved: (id) => this.push({ removedDrivers: [id] }),
    },
  });
  seq = 0;
  readonly events: Event[] = [];
  private nextPort = 1;
  private beat = 0;

  push(fields: Omit<Event, 'type' | 'seq'>): void {
    this.events.push({ type: 'MasterStateEvent', seq: ++this.seq, ...fields });
  }

  addWorker(): void {
    const port = this.nextPort++;
    const ref = new RpcEndpointRef(`127.0.0.1:${port}`, 'Worker', nowhere);
    const w = new WorkerInfo(`w${port}`, '127.0.0.1', port, 4, 4096, ref, '', 0);
    this.cluster.addWorker(w);
  }

  /** A worker changes (a heartbeat): a new version of its entry. */
  touchWorker(pick: number): void {
    const all = [...this.cluster.registeredWorkers()];
    const w = all[pick % Math.max(1, all.length)];
    if (!w) return;
    this.cluster.workerHeartbeat(w, ++this.beat);
  }

  removeWorker(pick: number): void {
    const all = [...this.cluster.registeredWorkers()];
    const w = all[pick % Math.max(1, all.length)];
    if (w) this.cluster.forgetWorker(w);
  }

  /** The same worker comes back after it went: a new entry with the same id. */
  reregister(pick: number): void {
    const all = [...this.cluster.registeredWorkers()];
    const w = all[pick % Math.max(1, all.length)];
    if (!w) return;
    this.cluster.forgetWorker(w);
    const again = new WorkerInfo(w.id, w.host, w.port, 8, 4096, w.endpoint, '', ++this.beat);
    this.cluster.addWorker(again);
  }

  addApp(): void {
    const port = this.nextPort++;
    const ref = new RpcEndpointRef(`127.0.0.1:${port}`, 'AppClient', nowhere);
    const a = new ApplicationInfo(`app-${port}`, appDescription(), ref, 0, 8);
    this.cluster.addApp(a);
  }

  /** An application finishes: it moves to the completed table (the oldest dropped when full). */
  finishApp(pick: number): void {
    const all = this.cluster.activeApps();
    const a = all[pick % Math.max(1, all.length)];
    if (!a) return;
    this.cluster.finishApp(a, { state: 'FINISHED', now: ++this.beat });
  }

  page(after: string | undefined, limit: number): State {
    const cursor = after === undefined ? undefined : parse(after);
    const { summaries, next } = this.cluster.page(cursor, limit, 1 << 30);
    return {
      type: 'MasterStateResponse',
      url: 'wick://m:7077',
      webUiUrl: 'http://m:8080',
      status: 'ALIVE',
      ...summaries,
      seq: this.seq,
      ...(next ? { next: formatStateCursor(next) } : {}),
    };
  }
}

function parse(text: string): StatePosition {
  const at = parseStateCursor(text);
  assert.ok(at, `a cursor: ${text}`);
  return at;
}

const op = fc.oneof(
  fc.constant({ kind: 'addWorker' as const, pick: 0 }),
  fc.record({ kind: fc.constant('touchWorker' as const), pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('removeWorker' as const), pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('reregister' as const), pick: fc.nat(20) }),
  fc.constant({ kind: 'addApp' as const, pick: 0 }),
  fc.record({ kind: fc.constant('finishApp' as const), pick: fc.nat(20) }),
);

function run(m: Model, o: { kind: string; pick: number }): void {
  const ops: Record<string, (pick: number) => void> = {
    addWorker: () => m.addWorker(),
    touchWorker: (p) => m.touchWorker(p),
    removeWorker: (p) => m.removeWorker(p),
    reregister: (p) => m.reregister(p),
    addApp: () => m.addApp(),
    finishApp: (p) => m.finishApp(p),
  };
  ops[o.kind]?.(o.pick);
}

/** The parts of a state that must agree, in a comparable form. */
const view = (s: State) => ({
  workers: Object.fromEntries(s.workers.map((w) => [w.id, [w.cores, w.lastHeartbeat, w.state]])),
  activeApps: s.activeApps.map((a) => a.id).sort(),
  completedApps: s.completedApps.map((a) => a.id).sort(),
});

test('pages read while the master changes, with the changes pushed across them, end exactly at the master’s state', () => {
  fc.assert(
    fc.property(
      fc.array(op, { maxLength: 15 }),
      fc.array(fc.array(op, { maxLength: 4 }), { minLength: 1, maxLength: 8 }),
      fc.array(op, { maxLength: 5 }),
      fc.integer({ min: 1, max: 4 }),
      (before, between, afterwards, limit) => {
        const m = new Model();
        for (const o of before) run(m, o);
        // The subscription starts here: events from now on reach the client.
        const from = m.events.length;
        const pages = new StatePages();
        let after: string | undefined;
        let i = 0;
        do {
          const page = m.page(after, limit);
          pages.add(page);
          after = page.next;
          // Changes between the first pages only: added at the end, they could outrun the reading.
          for (const o of between[i++] ?? []) run(m, o);
        } while (after !== undefined);
        // The events that came while the pages were read, then the later ones, in order.
        for (const o of afterwards) run(m, o);
        // Between changes the copy never goes back to an older version of an entry.
        const seen = new Map<string, number>();
        const noneOlder = () => {
          for (const w of (pages.state as State).workers) {
            const last = seen.get(w.id) ?? -1;
            assert.ok(w.lastHeartbeat >= last, `${w.id} went back to version ${w.lastHeartbeat}`);
            seen.set(w.id, w.lastHeartbeat);
          }
        };
        noneOlder();
        for (const e of m.events.slice(from)) {
          pages.apply(e);
          noneOlder();
        }
        const truth = m.page(undefined, 10_000);
        assert.deepEqual(view(pages.state as State), view(truth));
      },
    ),
    { numRuns: 1500 },
  );
});

test('a page whose next does not move forward is refused, not read for ever', () => {
  const m = new Model();
  for (let i = 0; i < 3; i++) m.addWorker();
  const pages = new StatePages();
  const first = m.page(undefined, 1);
  pages.add(first);
  assert.throws(() => pages.add({ ...first }), /do not move forward/);
});
