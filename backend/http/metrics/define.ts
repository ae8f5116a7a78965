import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * How Wick's metrics are named, described and read. Names follow Spark's PrometheusServlet, which
 * turns a Dropwizard key `<source>.<name>` into `metrics_<source>_<name>_<suffix>` with a
 * `type` label: `metrics_master_aliveWorkers_Value{type="gauges"}`. A dashboard or alert written
 * for a Spark standalone cluster's /metrics/master/prometheus therefore reads a Wick master as it
 * is. Spark writes each gauge twice, as `_Number` and `_Value`, and both are queried in the wild
 * (Grafana's Spark dashboards read `_Number`): the gauges Spark has are written twice here too
 * (`sameAsSpark`); the others only as `_Value`. Counters end in `_Count` with
 * `type="counters"`, as Spark's do.
 *
 * Every value is read when Prometheus scrapes, from the state the process keeps anyway (a
 * collect() per metric over one snapshot per scrape): nothing is counted on a hot path.
 */

export type MetricSource = 'master' | 'application' | 'worker';

export interface MetricSpec {
  /** The exposed name, e.g. metrics_master_aliveWorkers_Value. */
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  /** Label names besides `type`. */
  labels: readonly string[];
  source: MetricSource;
  /** Spark's own name for it (`master.aliveWorkers`), when Spark has one. */
  spark?: string;
}

export interface Sample {
  labels?: Record<string, string>;
  value: number;
}

/** A metric and how to read its samples from a snapshot `S` of its process's state. */
export interface MetricDef<S> {
  spec: MetricSpec;
  read: (snapshot: S) => Iterable<Sample>;
}

const TYPE_LABEL = { gauge: 'gauges', counter: 'counters' } as const;

/** Spark's normalizeKey: anything but a letter or a digit becomes `_`. */
function key(source: MetricSource, name: string): string {
  return `metrics_${`${source}_${name}`.replace(/[^a-zA-Z0-9]/g, '_')}`;
}

interface Options {
  help: string;
  labels?: readonly string[];
  /** The Spark metric this one is, for the docs (`master.aliveWorkers`, `appStatus.jobs.failedJobs`). */
  spark?: string;
  /**
   * The name is exactly the one Spark's servlet writes (the same source and key, no labels of
   * Wick's): a gauge is written as `_Number` too, so that a query written for Spark finds it.
   */
  sameAsSpark?: boolean;
}

/** A gauge: `_Value`, and `_Number` too when Spark has it. */
export function gauge<S>(
  source: MetricSource,
  name: string,
  o: Options,
  read: (snapshot: S) => Iterable<Sample> | number,
): MetricDef<S>[] {
  const labels = o.labels ?? [];
  const suffixes = o.sameAsSpark ? ['Number', 'Value'] : ['Value'];
  return suffixes.map((suffix) => ({
    spec: {
      name: `${key(source, name)}_${suffix}`,
      type: 'gauge',
      help: o.help,
      labels,
      source,
      ...(o.spark === undefined ? {} : { spark: o.spark }),
    },
    read: samples(read),
  }));
}

/** A counter (`_Count`): a total since its subject started, which only grows. */
export function counter<S>(
  source: MetricSource,
  name: string,
  o: Options,
  read: (snapshot: S) => Iterable<Sample> | number,
): MetricDef<S>[] {
  return [
    {
      spec: {
        name: `${key(source, name)}_Count`,
        type: 'counter',
        help: o.help,
        labels: o.labels ?? [],
        source,
        ...(o.spark === undefined ? {} : { spark: o.spark }),
      },
      read: samples(read),
    },
  ];
}

function samples<S>(read: (s: S) => Iterable<Sample> | number): (s: S) => Iterable<Sample> {
  return (s) => {
    const r = read(s);
    return typeof r === 'number' ? [{ value: r }] : r;
  };
}

/** One sample per value of `values`, labelled `label`, counted by `of` (0 for the absent ones). */
export function countBy<T, V extends string>(
  items: Iterable<T>,
  label: string,
  values: readonly V[],
  of: (item: T) => V,
): Sample[] {
  const counts = new Map<V, number>(values.map((v) => [v, 0]));
  for (const item of items) {
    const v = of(item);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return [...counts].map(([v, n]) => ({ labels: { [label]: v }, value: n }));
}

/**
 * Registers every metric of `defs` on `registry`, each read at scrape time from `snapshot()`;
 * no snapshot (the process is starting): no samples. A metric's samples are replaced whole at
 * each scrape, so a series whose subject is gone (an application the master no longer retains)
 * goes with it.
 */
export function registerMetrics<S>(
  registry: Registry,
  defs: readonly MetricDef<S>[],
  snapshot: () => Promise<S | undefined>,
): void {
  for (const { spec, read } of defs) {
    const typeLabel = { type: TYPE_LABEL[spec.type] };
    const labelNames = ['type', ...spec.labels];
    if (spec.type === 'gauge') {
      new Gauge({
        name: spec.name,
        help: spec.help,
        labelNames,
        registers: [registry],
        async collect() {
          const s = await snapshot();
          this.reset();
          if (s === undefined) return;
          for (const x of read(s)) this.set({ ...typeLabel, ...x.labels }, x.value);
        },
      });
    } else {
      new Counter({
        name: spec.name,
        help: spec.help,
        labelNames,
        registers: [registry],
        async collect() {
          const s = await snapshot();
          // The total is read, not counted here: the counter is set to it.
          this.reset();
          if (s === undefined) return;
          for (const x of read(s)) this.inc({ ...typeLabel, ...x.labels }, x.value);
        },
      });
    }
  }
}

/**
 * One snapshot per scrape: Registry.metrics() calls every metric's collect() in one turn, and
 * they all get the promise the first one started; the next scrape loads afresh.
 */
export function perScrape<S>(load: () => Promise<S | undefined>): () => Promise<S | undefined> {
  let pending: Promise<S | undefined> | undefined;
  return () => {
    if (pending) return pending;
    const p = load();
    pending = p;
    const clear = () => {
      if (pending === p) pending = undefined;
    };
    p.then(clear, clear);
    return p;
  };
}
