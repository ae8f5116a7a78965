import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MessageOf } from '../../backend/protocol/registry.js';
import type { DriverSummary, MasterStateResponse } from '../../backend/protocol/state.js';
import { applyEvent } from '../../backend/shared/applyEvent.js';
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
