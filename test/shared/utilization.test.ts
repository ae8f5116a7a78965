/**
 * RunningTotals, kept from the changes alone, against clusterTotals walking the state those
 * changes made (applyEvent), over random streams of workers added, changed and removed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { WorkerSummary } from '../../backend/protocol/state.js';
import { applyEvent } from '../../backend/shared/applyEvent.js';
import { clusterTotals, RunningTotals } from '../../backend/shared/utilization.js';
import { masterState } from '../helpers/masterState.js';

const summary = fc.record({
  id: fc.constantFrom('w0', 'w1', 'w2', 'w3', 'w4'),
  state: fc.constantFrom('ALIVE', 'DEAD', 'DECOMMISSIONED', 'UNKNOWN'),
  cores: fc.integer({ min: 1, max: 64 }),
  coresUsed: fc.integer({ min: 0, max: 64 }),
  memory: fc.integer({ min: 1, max: 1 << 20 }),
  memoryUsed: fc.integer({ min: 0, max: 1 << 20 }),
});

const change = fc.record({
  workers: fc.array(summary, { maxLength: 4 }),
  removedWorkers: fc.array(fc.constantFrom('w0', 'w1', 'w2', 'w3', 'w4', 'w9'), { maxLength: 2 }),
});

const asWorker = (w: typeof summary extends fc.Arbitrary<infer T> ? T : never) =>
  ({
    ...w,
    host: '127.0.0.1',
    port: 1,
    webUiAddress: '',
    executors: [],
    driverIds: [],
    lastHeartbeat: 0,
  }) as unknown as WorkerSummary;

test('totals kept from the changes are the totals of the state the changes made', () => {
  fc.assert(
    fc.property(
      fc.array(summary, { maxLength: 5 }),
      fc.array(change, { maxLength: 30 }),
      (start, changes) => {
        // A snapshot lists each worker once.
        const first = [...new Map(start.map((w) => [w.id, asWorker(w)])).values()];
        const state = masterState({ workers: first });
        const totals = new RunningTotals();
        totals.reset(state);
        assert.deepEqual(totals.totals, clusterTotals(state));
        changes.forEach((c, i) => {
          const event = {
            type: 'MasterStateEvent' as const,
            seq: i + 1,
            // An event names a worker once, as the broadcaster's do.
            workers: [...new Map(c.workers.map((w) => [w.id, asWorker(w)])).values()],
            removedWorkers: [...new Set(c.removedWorkers)],
          };
          applyEvent(state, event);
          totals.apply(event);
          assert.deepEqual(totals.totals, clusterTotals(state));
        });
      },
    ),
    { numRuns: 500 },
  );
});
