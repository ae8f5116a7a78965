/**
 * Benchmark `dashboard`: what each pushed change costs the dashboard's page at a large cluster.
 * The page (webview/data/store.ts, in VS Code's panel and the master's web UI alike) holds the
 * master's state and hands out a new object per change, so that what compares by identity sees
 * it; it also keeps the utilization chart's totals. Here, in one process: a state of `--workers`
 * workers, then pushes as the master sends them once they all heartbeat (HEARTBEATS_PER_PUSH
 * workers' new times each, StateBroadcaster.ts), applied by DashboardStore.change.
 *
 * Floor: the least a mirror can do with the same pushes, in the same run: applyEvent in place on
 * one state (no new object for anyone to compare) and the totals kept from the changes. For
 * context, what the store did before sharing (a structuredClone of the state per push, and the
 * totals summed over every worker).
 *
 * Writes bench/results/dashboard.json: figures.pushMs (median per push), baseline.inPlacePushMs,
 * ratios.pushVsInPlace (goal ≤ 2).
 *
 *   npm run bench -- dashboard [--workers 10000] [--pushes 200] [--rounds 5]
 */
import { parseArgs } from 'node:util';
import { HEARTBEATS_PER_PUSH } from '../backend/master/StateBroadcaster.js';
import type { MessageOf } from '../backend/protocol/registry.js';
import type {
  MasterStateEvent,
  MasterStateResponse,
  WorkerSummary,
} from '../backend/protocol/state.js';
import { applyEvent } from '../backend/shared/applyEvent.js';
import { RunningTotals, UtilizationHistory } from '../backend/shared/utilization.js';
import { DashboardStore } from '../webview/data/store.js';
import { int, sized } from './lib/args.js';
import type { Goal } from './lib/goals.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

export const goals: Goal[] = [
  {
    figure: 'ratios.pushVsInPlace',
    op: '<=',
    value: 2,
    what: "a push to the page's store ÷ applying it in place",
  },
];

const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: sized('10000', '200') },
    pushes: { type: 'string', default: sized('200', '5') },
    rounds: { type: 'string', default: sized('5', '1') },
  },
  strict: true,
});
const workers = int('workers', opts.workers, 1, 1_000_000);
const pushes = int('pushes', opts.pushes, 1, 100_000);
const rounds = int('rounds', opts.rounds, 1, 100);
const perPush = Math.min(HEARTBEATS_PER_PUSH, workers);

function worker(i: number): WorkerSummary {
  return {
    id: `worker-20261208000000-10.0.${i >> 8}.${i & 255}-7078`,
    host: `10.0.${i >> 8}.${i & 255}`,
    port: 7078,
    webUiAddress: `http://10.0.${i >> 8}.${i & 255}:8081`,
    cores: 8,
    coresUsed: 2,
    memory: 16_384,
    memoryUsed: 2_048,
    state: 'ALIVE',
    lastHeartbeat: 1,
    executors: [{ appId: 'app-20261208000000-0000', execId: i, cores: 2, memory: 1_024 }],
    driverIds: [],
  } as unknown as WorkerSummary;
}

function startState(): State {
  return {
    type: 'MasterStateResponse',
    seq: 0,
    url: 'wick://master:7077',
    webUiUrl: 'http://master:8080',
    status: 'ALIVE',
    workers: Array.from({ length: workers }, (_, i) => worker(i)),
    activeApps: [],
    completedApps: [],
    activeDrivers: [],
    completedDrivers: [],
  } as unknown as State;
}

/** Pushes of heartbeats, each naming the next `perPush` workers with a new time. */
function heartbeatPushes(state: State): Event[] {
  return Array.from({ length: pushes }, (_, k) => ({
    type: 'MasterStateEvent',
    seq: k + 1,
    workers: Array.from({ length: perPush }, (_, j) => ({
      ...(state.workers[(k * perPush + j) % workers] as WorkerSummary),
      lastHeartbeat: k + 2,
    })),
  }));
}

/** ms per push of `apply` over the pushes. */
function msPerPush(events: Event[], apply: (e: Event) => void): number {
  const t = performance.now();
  for (const e of events) apply(e);
  return (performance.now() - t) / events.length;
}

function storePush(events: Event[]): number {
  const store = new DashboardStore(() => 0);
  store.snapshot({
    state: startState(),
    capabilities: { killEnabled: false },
    utilization: [],
  } as never);
  return msPerPush(events, (e) => store.change(e as never));
}

function inPlacePush(events: Event[]): number {
  const state = startState();
  const totals = new RunningTotals();
  totals.reset(state);
  const history = new UtilizationHistory();
  return msPerPush(events, (e) => {
    applyEvent(state, e);
    totals.apply(e);
    history.recordTotals(totals.totals, 0);
  });
}

function deepCopyPush(events: Event[]): number {
  let state = startState();
  const history = new UtilizationHistory();
  return msPerPush(events, (e) => {
    const next = structuredClone(state);
    applyEvent(next, e);
    history.record(next, 0);
    state = next;
  });
}

async function main(): Promise<void> {
  const events = heartbeatPushes(startState());
  // Warm-up: JIT on every path.
  storePush(events);
  inPlacePush(events);
  const store: number[] = [];
  const inPlace: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternating which goes first, so that both see the same machine.
    if (r % 2 === 0) {
      store.push(storePush(events));
      inPlace.push(inPlacePush(events));
    } else {
      inPlace.push(inPlacePush(events));
      store.push(storePush(events));
    }
  }
  const deepCopy = deepCopyPush(events.slice(0, Math.min(events.length, 20)));
  const figures = {
    pushMs: round(median(store), 4),
    workers,
    heartbeatsPerPush: perPush,
    pushes,
    rounds,
  };
  const baseline = {
    inPlacePushMs: round(median(inPlace), 4),
    deepCopyPushMs: round(deepCopy, 3),
  };
  const ratios = { pushVsInPlace: round(figures.pushMs / baseline.inPlacePushMs, 3) };
  printTable(
    `dashboard — ms per push of ${fmt(perPush)} heartbeats at ${fmt(workers)} workers (median of ${rounds} rounds of ${fmt(pushes)})`,
    ['', 'ms per push', '÷ in place'],
    [
      [
        "the page's store (DashboardStore.change)",
        fmt(figures.pushMs, 3),
        fmt(ratios.pushVsInPlace, 2),
      ],
      ['floor: applyEvent in place, totals kept', fmt(baseline.inPlacePushMs, 3), '1.00'],
      [
        'context: a deep copy per push, totals summed (the store before)',
        fmt(baseline.deepCopyPushMs, 2),
        fmt(baseline.deepCopyPushMs / baseline.inPlacePushMs, 1),
      ],
    ],
  );
  const file = writeResults('dashboard', { goals, figures, baseline, ratios });
  console.log(`Wrote ${file}`);
}

await runBenchmark('dashboard', main, 5 * 60_000);
