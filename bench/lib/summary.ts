/**
 * The one page of numbers that `npm run bench` ends with (issue 31, item 6): every goal of every
 * benchmark that ran, its figure, met or missed, and the machine's load while that benchmark ran,
 * as a table and as bench/results/summary.json. Pure: the runner (scripts/bench.mjs) gathers what
 * each benchmark wrote and the load it sampled, this turns them into rows. docs/benchmarks.md says
 * how to read it.
 */
import { figureOf, type Goal, parseGoals, type Verdict, verdict } from './goals.js';
import { type Cell, formatTable } from './table.js';

/** The 1-minute load average, sampled while one benchmark ran. */
export interface LoadStats {
  mean: number;
  max: number;
}

/** What the runner knows of one benchmark after running it. */
export interface BenchOutcome {
  name: string;
  /** Its exit code (0: it ran to the end), or the signal that ended it. */
  exit: number | string | null;
  /** Its results file as parsed JSON, when it wrote one during this run. */
  results?: unknown;
  load?: LoadStats;
}

export type Status =
  | Verdict
  /** A smoke run's figure: measured at tiny sizes on whatever machine, no verdict. */
  | 'not comparable'
  /** Missing, and the benchmark says why that may be (Goal.optional). */
  | 'skipped'
  | 'failed'
  | 'no goals';

export interface SummaryRow {
  benchmark: string;
  /** The figure's path in the results file, e.g. 'figures.jobP50Ms'; '' for a failed bench. */
  figure: string;
  what: string;
  value: number | null;
  /** e.g. '<= 0.5'; '' when there is no goal to show. */
  goal: string;
  status: Status;
  /** The verdict a smoke figure would get, kept in the JSON for reference only. */
  verdict?: Verdict;
  /** Why: a failure's exit code, an optional figure's reason. */
  note?: string;
  load1mMean: number | null;
  load1mMax: number | null;
}

export interface Summary {
  smoke: boolean;
  cpus: number;
  startedAt: string;
  /** The commit measured (git describe), when known. */
  commit?: string;
  rows: SummaryRow[];
  counts: Record<Status, number>;
}

const OP_TEXT: Record<Goal['op'], string> = { '<=': '≤', '>=': '≥', '<': '<', '>': '>', '==': '=' };

function loadOf(o: BenchOutcome): Pick<SummaryRow, 'load1mMean' | 'load1mMax'> {
  return {
    load1mMean: o.load ? Math.round(o.load.mean * 100) / 100 : null,
    load1mMax: o.load ? Math.round(o.load.max * 100) / 100 : null,
  };
}

/** The rows of one benchmark: one per goal, and one more if it failed or declared none. */
function rowsOf(o: BenchOutcome, smoke: boolean): SummaryRow[] {
  const load = loadOf(o);
  const bare = { benchmark: o.name, figure: '', what: '', value: null, goal: '', ...load };
  const rows: SummaryRow[] = [];
  const results = o.results as Record<string, unknown> | undefined;
  let goals: Goal[] = [];
  let problem: string | undefined;
  if (results !== undefined) {
    try {
      goals = parseGoals(results.goals ?? [], `${o.name}.json`);
    } catch (err) {
      problem = (err as Error).message;
    }
  }
  for (const g of goals) {
    const value = figureOf(results as Parameters<typeof figureOf>[0], g.figure);
    const v = verdict(value, g);
    const row: SummaryRow = {
      ...bare,
      figure: g.figure,
      what: g.what ?? g.figure.slice(g.figure.indexOf('.') + 1),
      value: value ?? null,
      goal: `${g.op} ${g.value}`,
      status: v,
    };
    if (value === undefined && g.optional) {
      row.status = 'skipped';
      row.note = g.optional;
    } else if (value !== undefined && smoke) {
      row.status = 'not comparable';
      row.verdict = v;
    }
    rows.push(row);
  }
  const failed = o.exit !== 0;
  if (failed || results === undefined || problem) {
    const why = [
      failed ? `exited ${o.exit}` : '',
      results === undefined ? 'wrote no results' : '',
      problem ?? '',
    ]
      .filter(Boolean)
      .join('; ');
    rows.push({ ...bare, status: 'failed', note: why });
  } else if (goals.length === 0) {
    rows.push({ ...bare, status: 'no goals', note: 'the benchmark declares no goals' });
  }
  return rows;
}

export function buildSummary(
  outcomes: readonly BenchOutcome[],
  run: { smoke: boolean; cpus: number; startedAt: string; commit?: string },
): Summary {
  const rows = outcomes.flatMap((o) => rowsOf(o, run.smoke));
  const counts: Record<Status, number> = {
    met: 0,
    missed: 0,
    'not measured': 0,
    'not comparable': 0,
    skipped: 0,
    failed: 0,
    'no goals': 0,
  };
  for (const r of rows) counts[r.status]++;
  return { ...run, rows, counts };
}

/** A figure as the table shows it: enough digits to read, no more. */
export function formatValue(v: number | null): string {
  if (v === null) return '—';
  const a = Math.abs(v);
  const decimals = a >= 1000 || Number.isInteger(v) ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return v.toLocaleString('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

function goalText(goal: string): string {
  const [op, value] = goal.split(' ');
  if (!op || value === undefined) return goal;
  const n = Number(value).toLocaleString('en-US', { maximumFractionDigits: 6 });
  return `${OP_TEXT[op as Goal['op']] ?? op} ${n}`;
}

/** The summary as the runner prints it: a heading, the table, the counts. */
export function formatSummary(s: Summary): string {
  const rows: Cell[][] = s.rows.map((r) => [
    r.benchmark,
    r.what || r.figure || '—',
    formatValue(r.value),
    goalText(r.goal),
    r.status === 'not comparable' || !r.note ? r.status : `${r.status}: ${r.note}`,
    r.load1mMean === null ? '—' : `${r.load1mMean.toFixed(1)} / ${r.load1mMax?.toFixed(1)}`,
  ]);
  const heading = s.smoke
    ? 'Summary of a SMOKE run: tiny sizes, to show the benchmarks run; the figures are NOT comparable with the goals'
    : 'Summary: every goal of every benchmark that ran';
  const counted = (Object.entries(s.counts) as [Status, number][])
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  return [
    heading,
    formatTable(['benchmark', 'figure', 'value', 'goal', 'status', 'load 1m mean / max'], rows),
    `${counted || 'no rows'}. Load: the 1-minute load average while that benchmark ran, on ${s.cpus} CPUs (its own processes count in it; see docs/benchmarks.md).`,
  ].join('\n');
}
