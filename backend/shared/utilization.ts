import type { MessageOf } from '../protocol/registry.js';
import type { MasterStateEvent, MasterStateResponse } from '../protocol/state.js';

/**
 * The cluster's totals over ALIVE workers, as Spark's master page and /json count them, and a
 * short history of them for the dashboard's chart. Pure and free of Node APIs: the web UI and the
 * page in the browser share it.
 */

type State = MessageOf<typeof MasterStateResponse>;

export interface ClusterTotals {
  aliveWorkers: number;
  cores: number;
  coresUsed: number;
  /** MiB */
  memory: number;
  memoryUsed: number;
}

export function clusterTotals(state: Pick<State, 'workers'>): ClusterTotals {
  const t = { aliveWorkers: 0, cores: 0, coresUsed: 0, memory: 0, memoryUsed: 0 };
  for (const w of state.workers) {
    if (w.state !== 'ALIVE') continue;
    t.aliveWorkers++;
    t.cores += w.cores;
    t.coresUsed += w.coresUsed;
    t.memory += w.memory;
    t.memoryUsed += w.memoryUsed;
  }
  return t;
}

type Event = MessageOf<typeof MasterStateEvent>;
type Summary = State['workers'][number];

/**
 * clusterTotals kept up to date from the pushed changes, each worker's part kept by id: a change
 * costs its own entries, not a walk of every worker (10,000 workers registering one by one made
 * that walk quadratic).
 */
export class RunningTotals {
  private readonly parts = new Map<string, Summary>();
  private t: ClusterTotals = clusterTotals({ workers: [] });

  get totals(): Readonly<ClusterTotals> {
    return this.t;
  }

  /** Starts again from a whole state. */
  reset(state: Pick<State, 'workers'>): void {
    this.parts.clear();
    for (const w of state.workers) this.parts.set(w.id, w);
    this.t = clusterTotals(state);
  }

  /** Applies a change that was applied to the state (applyEvent). */
  apply(event: Pick<Event, 'workers' | 'removedWorkers'>): void {
    for (const w of event.workers ?? []) {
      this.add(this.parts.get(w.id), -1);
      this.parts.set(w.id, w);
      this.add(w, 1);
    }
    for (const id of event.removedWorkers ?? []) {
      this.add(this.parts.get(id), -1);
      this.parts.delete(id);
    }
  }

  private add(w: Summary | undefined, sign: 1 | -1): void {
    if (w?.state !== 'ALIVE') return;
    const t = this.t;
    t.aliveWorkers += sign;
    t.cores += sign * w.cores;
    t.coresUsed += sign * w.coresUsed;
    t.memory += sign * w.memory;
    t.memoryUsed += sign * w.memoryUsed;
  }
}

/** Spark's /json/clusterutilization: totals and percentages (100 when there is nothing). */
export function sparkClusterUtilizationJson(state: State): Record<string, unknown> {
  const t = clusterTotals(state);
  const pct = (used: number, total: number) =>
    total === 0 ? 100 : Math.floor((100 * used) / total);
  return {
    waitingDrivers: state.activeDrivers.filter((d) => d.state === 'SUBMITTED').length,
    cores: t.cores,
    coresused: t.coresUsed,
    coresutilization: pct(t.coresUsed, t.cores),
    memory: t.memory,
    memoryused: t.memoryUsed,
    memoryutilization: pct(t.memoryUsed, t.memory),
  };
}

export interface UtilizationSample {
  /** ms since the epoch */
  time: number;
  cores: number;
  coresUsed: number;
  memory: number;
  memoryUsed: number;
}

/** How far back the chart looks. */
export const UTILIZATION_WINDOW_MS = 15 * 60 * 1000;

/**
 * Samples taken on change (never on a timer): a point is added only when a total differs from the
 * last one, and points older than the window are dropped, except the last one before it, which
 * still says what the value was when the window begins.
 */
export class UtilizationHistory {
  readonly samples: UtilizationSample[] = [];

  constructor(private readonly windowMs = UTILIZATION_WINDOW_MS) {}

  record(state: Pick<State, 'workers'>, time: number): boolean {
    return this.recordTotals(clusterTotals(state), time);
  }

  /** As record, with the totals known (RunningTotals). */
  recordTotals(t: Readonly<ClusterTotals>, time: number): boolean {
    const last = this.samples[this.samples.length - 1];
    if (
      last &&
      last.cores === t.cores &&
      last.coresUsed === t.coresUsed &&
      last.memory === t.memory &&
      last.memoryUsed === t.memoryUsed
    ) {
      return false;
    }
    this.samples.push({
      time,
      cores: t.cores,
      coresUsed: t.coresUsed,
      memory: t.memory,
      memoryUsed: t.memoryUsed,
    });
    this.trim(time);
    return true;
  }

  replace(samples: UtilizationSample[]): void {
    this.samples.splice(0, this.samples.length, ...samples);
  }

  trim(now: number): void {
    const from = now - this.windowMs;
    let drop = 0;
    while (drop + 1 < this.samples.length && (this.samples[drop + 1]?.time ?? 0) <= from) drop++;
    if (drop > 0) this.samples.splice(0, drop);
  }
}
