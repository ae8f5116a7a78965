import type { MetricSource, MetricSpec } from './define.js';
import { masterMetricDefs } from './masterMetrics.js';
import { workerMetricDefs } from './workerMetrics.js';

/** Every metric a web UI serves, by the process that serves it: what docs/metrics.md lists. */
export function metricCatalog(): { served: 'master' | 'worker'; specs: MetricSpec[] }[] {
  return [
    { served: 'master', specs: masterMetricDefs.map((d) => d.spec) },
    { served: 'worker', specs: workerMetricDefs.map((d) => d.spec) },
  ];
}

export const SOURCE_TITLES: Record<MetricSource, string> = {
  master: 'The master',
  application: 'Each application, through the master',
  worker: 'Each worker',
};
