/**
 * How a metric is named, typed and read at scrape time (define.ts), scraped from a registry of
 * its own and read back by an independent parser.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { register as globalRegistry, Registry } from 'prom-client';
import {
  counter,
  gauge,
  perScrape,
  registerMetrics,
} from '../../../backend/http/metrics/define.js';
import { Scrape } from '../../helpers/prometheus.js';

interface Snap {
  total: number;
  apps: { id: string; done: number }[];
}

const defs = [
  ...gauge<Snap>('master', 'workers', { help: 'w', sameAsSpark: true }, (s) => s.total),
  ...gauge<Snap>('master', 'own', { help: 'o' }, (s) => s.total * 2),
  ...counter<Snap>(
    'application',
    'tasks_completedTasks',
    { help: 'c', labels: ['application_id'] },
    (s) => s.apps.map((a) => ({ labels: { application_id: a.id }, value: a.done })),
  ),
];

function registryOver(snap: () => Snap | undefined): { registry: Registry; loads: () => number } {
  let loads = 0;
  const registry = new Registry();
  registerMetrics(
    registry,
    defs,
    perScrape(async () => {
      loads++;
      return snap();
    }),
  );
  return { registry, loads: () => loads };
}

test("Spark's names: a gauge Spark has is written as _Number and _Value, a counter as _Count", async () => {
  const { registry } = registryOver(() => ({ total: 3, apps: [{ id: 'app-1', done: 7 }] }));
  const s = new Scrape(await registry.metrics());
  assert.equal(s.value('metrics_master_workers_Number', { type: 'gauges' }), 3);
  assert.equal(s.value('metrics_master_workers_Value', { type: 'gauges' }), 3);
  assert.equal(s.family('metrics_master_workers_Value').type, 'GAUGE');
  assert.equal(s.value('metrics_master_own_Value', { type: 'gauges' }), 6);
  assert.equal(s.families.has('metrics_master_own_Number'), false);
  const c = s.family('metrics_application_tasks_completedTasks_Count');
  assert.equal(c.type, 'COUNTER');
  assert.deepEqual(c.samples, [
    { labels: { type: 'counters', application_id: 'app-1' }, value: 7 },
  ]);
  // Its own registry: nothing lands in prom-client's global one.
  assert.equal((await globalRegistry.metrics()).trim(), '');
});

test('each scrape reads the state then: values follow it, and a subject gone takes its series', async () => {
  let snap: Snap = {
    total: 1,
    apps: [
      { id: 'app-1', done: 1 },
      { id: 'app-2', done: 5 },
    ],
  };
  const { registry } = registryOver(() => snap);
  const first = new Scrape(await registry.metrics());
  assert.equal(first.samples('metrics_application_tasks_completedTasks_Count').length, 2);
  snap = { total: 4, apps: [{ id: 'app-2', done: 9 }] };
  const second = new Scrape(await registry.metrics());
  assert.equal(second.value('metrics_master_workers_Value'), 4);
  // The total is the one read, not added to the last scrape's.
  assert.deepEqual(second.samples('metrics_application_tasks_completedTasks_Count'), [
    { labels: { type: 'counters', application_id: 'app-2' }, value: 9 },
  ]);
});

test('no snapshot yet: every family, no samples', async () => {
  const { registry } = registryOver(() => undefined);
  const s = new Scrape(await registry.metrics());
  assert.equal(s.families.size, defs.length);
  for (const f of s.families.values()) assert.deepEqual(f.samples, [], f.name);
});

test('one snapshot per scrape, whatever the number of metrics', async () => {
  const { registry, loads } = registryOver(() => ({ total: 1, apps: [] }));
  await registry.metrics();
  assert.equal(loads(), 1);
  await registry.metrics();
  assert.equal(loads(), 2);
});

test('a snapshot that fails fails the scrape', async () => {
  const registry = new Registry();
  registerMetrics(
    registry,
    defs,
    perScrape(async () => {
      throw new Error('the worker did not answer');
    }),
  );
  await assert.rejects(registry.metrics(), /the worker did not answer/);
});
