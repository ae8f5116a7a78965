import { applyEvent, copyForEvent } from '../../backend/shared/applyEvent.js';
import { RunningTotals, UtilizationHistory } from '../../backend/shared/utilization.js';
import type {
  Capabilities,
  DashboardSnapshot,
  MasterState,
  MasterStateChange,
  PastRunBrief,
  UtilizationSample,
} from '../protocol.js';
import type { DataSource } from './DataSource.js';

/** As many as the agent keeps (backend/agent/runStore.ts MAX_RUNS). */
const MAX_PAST_RUNS = 100;

export interface StoreState {
  master: MasterState | undefined;
  utilization: UtilizationSample[];
  capabilities: Capabilities;
  connected: boolean;
  connectionMessage: string | undefined;
  /** Bumped whenever a worker-mode page should re-read its worker's state. */
  workerVersion: number;
  /** VS Code: the runs of earlier local clusters (their pages read from their event logs). */
  pastRuns: PastRunBrief[];
}

/**
 * The page's copy of the master's state: a snapshot, then each pushed change applied in order
 * (the same applyEvent as the CLI's mirror), plus the chart's samples, taken on change.
 */
export class DashboardStore {
  private current: StoreState = {
    master: undefined,
    utilization: [],
    capabilities: { killEnabled: false },
    connected: false,
    connectionMessage: undefined,
    workerVersion: 0,
    pastRuns: [],
  };
  private readonly history = new UtilizationHistory();
  /** The chart's totals, kept from the changes rather than summed over every worker per push. */
  private readonly totals = new RunningTotals();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly now: () => number = Date.now) {}

  get state(): StoreState {
    return this.current;
  }

  /** Connects the store to a data source; returns a function that disconnects it. */
  connect(source: DataSource): () => void {
    return source.subscribe({
      snapshot: (s) => this.snapshot(s),
      change: (e) => this.change(e),
      workerChanged: () => this.set({ workerVersion: this.current.workerVersion + 1 }),
      connection: (connected, message) => this.set({ connected, connectionMessage: message }),
      pastRuns: (runs) => this.set({ pastRuns: runs.slice(0, MAX_PAST_RUNS) }),
    });
  }

  snapshot(s: DashboardSnapshot): void {
    this.history.replace(s.utilization);
    this.totals.reset(s.state);
    this.history.recordTotals(this.totals.totals, this.now());
    this.set({
      master: s.state,
      capabilities: s.capabilities,
      utilization: [...this.history.samples],
      connected: true,
      connectionMessage: undefined,
    });
  }

  change(e: MasterStateChange): void {
    const master = this.current.master;
    if (!master || e.seq <= master.seq) return;
    // A new object each time, so that components comparing by identity see the change; what the
    // change leaves alone is shared, not copied (10,000 workers at every push).
    const next = copyForEvent(master, e);
    applyEvent(next, e);
    this.totals.apply(e);
    const sampled = this.history.recordTotals(this.totals.totals, this.now());
    this.set({
      master: next,
      ...(sampled ? { utilization: [...this.history.samples] } : {}),
    });
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<StoreState>): void {
    this.current = { ...this.current, ...patch };
    for (const fn of [...this.listeners]) fn();
  }
}
