/** What Describe offers when its row's element was gone: the item that changed last first. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../../backend/agent/protocol.js';
import { describeChoices, MAX_CHOICES_PER_KIND } from '../../../extension/tree/describeChoices.js';

const app = (id: string, state: string, startTime: number, endTime?: number) => ({
  id,
  name: `App ${id}`,
  state,
  startTime,
  ...(endTime === undefined ? {} : { endTime }),
});

const state = (over: Partial<Record<string, unknown>> = {}) =>
  ({
    url: 'wick://127.0.0.1:7077',
    status: 'ALIVE',
    workers: [{ id: 'worker-a', host: '127.0.0.1', port: 4000, state: 'ALIVE' }],
    activeApps: [app('app-running', 'RUNNING', 5_000)],
    completedApps: [
      app('app-old', 'FINISHED', 1_000, 2_000),
      app('app-ended', 'KILLED', 3_000, 9_000),
    ],
    activeDrivers: [],
    completedDrivers: [{ id: 'driver-1', state: 'FINISHED', submitDate: 500 }],
    ...over,
  }) as unknown as MasterState;

test('the application that just ended comes first, then the others by their last change', () => {
  const c = describeChoices(state());
  assert.deepEqual(
    c.map((x) => x.target),
    [
      { kind: 'app', id: 'app-ended' },
      { kind: 'app', id: 'app-running' },
      { kind: 'app', id: 'app-old' },
      { kind: 'driver', id: 'driver-1' },
      { kind: 'worker', id: 'worker-a' },
      { kind: 'master' },
    ],
  );
  assert.deepEqual(c[0], {
    label: 'App app-ended',
    description: 'KILLED · app-ended',
    target: { kind: 'app', id: 'app-ended' },
  });
  assert.equal(c.at(-1)?.label, 'wick://127.0.0.1:7077');
});

test('nothing to offer without a master; many applications are bounded', () => {
  assert.deepEqual(describeChoices(undefined), []);
  const many = Array.from({ length: MAX_CHOICES_PER_KIND + 20 }, (_, i) =>
    app(`app-${i}`, 'FINISHED', i, i + 1),
  );
  const c = describeChoices(state({ completedApps: many, activeApps: [] }));
  const apps = c.filter((x) => x.target.kind === 'app');
  assert.equal(apps.length, MAX_CHOICES_PER_KIND);
  assert.deepEqual(apps[0]?.target, { kind: 'app', id: `app-${MAX_CHOICES_PER_KIND + 19}` });
});
