import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { MessageOf } from '../../backend/protocol/registry.js';
import type { DriverSummary, MasterStateResponse } from '../../backend/protocol/state.js';
import { applyEvent, copyForEvent } from '../../backend/shared/applyEvent.js';
import { masterState } from '../helpers/masterState.js';

type State = MessageOf<typeof MasterStateResponse>;

const driver = (id: string, state: DriverSummary['state'], more: Partial<DriverSummary> = {}) =>
  ({
    id,
    state,
    appPath: '/app.js',
    cores: 1,
    mem: 512,
    supervise: true,
    submitDate: 0,
    ...more,
  }) satisfies DriverSummary;

function state(active: DriverSummary[]): State {
  return masterState({ activeDrivers: active });
}

const ids = (ds: DriverSummary[]) => ds.map((d) => `${d.id} ${d.state}`);

test('a driver relaunched under a new id moves to the completed ones, RELAUNCHING; one its worker restarts stays active', () => {
  const s = state([driver('d-0', 'RUNNING', { workerId: 'w1' }), driver('d-1', 'RUNNING')]);
  // Its worker restarts d-1 itself: RELAUNCHING, still active.
  applyEvent(s, { type: 'MasterStateEvent', seq: 1, drivers: [driver('d-1', 'RELAUNCHING')] });
  assert.deepEqual(ids(s.activeDrivers), ['d-0 RUNNING', 'd-1 RELAUNCHING']);
  // The master relaunches d-0 as d-2, in one event or in two (either order).
  applyEvent(s, {
    type: 'MasterStateEvent',
    seq: 2,
    drivers: [driver('d-2', 'SUBMITTED', { relaunchedFrom: 'd-0' }), driver('d-0', 'RELAUNCHING')],
  });
  assert.deepEqual(ids(s.activeDrivers), ['d-1 RELAUNCHING', 'd-2 SUBMITTED']);
  assert.deepEqual(ids(s.completedDrivers), ['d-0 RELAUNCHING']);
  applyEvent(s, { type: 'MasterStateEvent', seq: 3, drivers: [driver('d-1', 'RELAUNCHING')] });
  applyEvent(s, {
    type: 'MasterStateEvent',
    seq: 4,
    drivers: [driver('d-3', 'SUBMITTED', { relaunchedFrom: 'd-1' })],
  });
  assert.deepEqual(ids(s.activeDrivers), ['d-2 SUBMITTED', 'd-3 SUBMITTED']);
  assert.deepEqual(ids(s.completedDrivers), ['d-0 RELAUNCHING', 'd-1 RELAUNCHING']);
});

/** Entries of each list by id, in a few states, and events that add, change and remove them. */
const entryId = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const workerOf = (id: string, n: number) => ({ id, host: 'h', port: n, cores: n }) as never;
const appOf = (id: string, state: string) => ({ id, name: id, state }) as never;
const driverOf = (id: string, state: string) => ({ id, state }) as never;
const event = fc.record({
  workers: fc.array(fc.tuple(entryId, fc.nat(9)), { maxLength: 3 }),
  removedWorkers: fc.array(entryId, { maxLength: 2 }),
  apps: fc.array(fc.tuple(entryId, fc.constantFrom('WAITING', 'RUNNING', 'FINISHED', 'KILLED')), {
    maxLength: 3,
  }),
  removedApps: fc.array(entryId, { maxLength: 1 }),
  drivers: fc.array(fc.tuple(entryId, fc.constantFrom('SUBMITTED', 'RUNNING', 'FINISHED')), {
    maxLength: 2,
  }),
  removedDrivers: fc.array(entryId, { maxLength: 1 }),
  status: fc.option(fc.constantFrom('ALIVE', 'STANDBY'), { nil: undefined }),
});

test('copyForEvent then applyEvent gives what a deep copy would, and leaves the state it copied as it was', () => {
  fc.assert(
    fc.property(fc.array(event, { maxLength: 25 }), (events) => {
      let shared = masterState();
      let deep = masterState();
      events.forEach((x, i) => {
        // An event names an entry once, as the broadcaster's do.
        const once = <T>(list: [string, T][]) => [...new Map(list).entries()];
        const e = {
          type: 'MasterStateEvent' as const,
          seq: i + 1,
          workers: once(x.workers).map(([id, n]) => workerOf(id, n)),
          removedWorkers: [...new Set(x.removedWorkers)],
          apps: once(x.apps).map(([id, s]) => appOf(id, s)),
          removedApps: x.removedApps,
          drivers: once(x.drivers).map(([id, s]) => driverOf(id, s)),
          removedDrivers: x.removedDrivers,
          ...(x.status ? { status: x.status as 'ALIVE' } : {}),
        };
        const before = structuredClone(shared);
        const next = copyForEvent(shared, e);
        applyEvent(next, e);
        assert.deepEqual(shared, before, 'the state copied is as it was');
        deep = structuredClone(deep);
        applyEvent(deep, e);
        assert.deepEqual(next, deep);
        shared = next;
      });
    }),
    { numRuns: 1000 },
  );
});
