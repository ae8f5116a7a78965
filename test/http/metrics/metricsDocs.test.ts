import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { metricCatalog } from '../../../backend/http/metrics/catalog.js';
import { metricsDocPath, renderMetricsDoc } from '../../../scripts/gen-metrics-docs.js';

test('docs/metrics.md names and describes every metric the web UIs serve', () => {
  const actual = readFileSync(metricsDocPath, 'utf8');
  assert.equal(actual, renderMetricsDoc(), 'docs/metrics.md is stale: run `npm run metrics-docs`');
  for (const { specs } of metricCatalog()) {
    for (const s of specs) {
      assert.match(actual, new RegExp(`\`${s.name}\``), s.name);
      assert.ok(s.help.length > 0, `${s.name} has no description`);
    }
  }
});

test("every metric's name is a valid Prometheus name, once per process", () => {
  for (const { served, specs } of metricCatalog()) {
    const names = specs.map((s) => s.name);
    assert.equal(new Set(names).size, names.length, `${served}: a name twice`);
    for (const n of names)
      assert.match(n, /^metrics_(master|worker|application)_[a-zA-Z0-9_]+_(Value|Number|Count)$/);
  }
});
