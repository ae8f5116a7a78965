import assert from 'node:assert/strict';
import { test } from 'node:test';
import { figureOf, type Goal, parseGoals, verdict } from '../../../bench/lib/goals.js';
import {
  type BenchOutcome,
  buildSummary,
  formatSummary,
  formatValue,
} from '../../../bench/lib/summary.js';

const run = { smoke: false, cpus: 2, startedAt: '2026-12-07T00:00:00.000Z' };
const load = { mean: 1.234, max: 2.5 };

function outcome(name: string, results: unknown, exit: number | string | null = 0): BenchOutcome {
  return { name, exit, results, load };
}

const latencyGoals: Goal[] = [
  { figure: 'figures.jobP50Ms', op: '<=', value: 0.5, what: 'p50' },
  { figure: 'figures.jobP99Ms', op: '<=', value: 2 },
  { figure: 'ratios.job100VsRaw', op: '>=', value: 0.9 },
];

test('each goal of each benchmark is one row: its figure, the goal, met or missed, the load', () => {
  const s = buildSummary(
    [
      outcome('latency', {
        goals: latencyGoals,
        figures: { jobP50Ms: 0.5, jobP99Ms: 2.01 },
        baseline: {},
        ratios: { job100VsRaw: 0.95 },
      }),
    ],
    run,
  );
  assert.deepEqual(
    s.rows.map((r) => [r.benchmark, r.figure, r.what, r.value, r.goal, r.status]),
    [
      ['latency', 'figures.jobP50Ms', 'p50', 0.5, '<= 0.5', 'met'],
      ['latency', 'figures.jobP99Ms', 'jobP99Ms', 2.01, '<= 2', 'missed'],
      ['latency', 'ratios.job100VsRaw', 'job100VsRaw', 0.95, '>= 0.9', 'met'],
    ],
  );
  assert.deepEqual(
    s.rows.map((r) => [r.load1mMean, r.load1mMax]),
    [
      [1.23, 2.5],
      [1.23, 2.5],
      [1.23, 2.5],
    ],
  );
  assert.equal(s.counts.met, 2);
  assert.equal(s.counts.missed, 1);
});

test('a figure a goal names but the results lack is "not measured", or "skipped" with the reason the bench gave', () => {
  const s = buildSummary(
    [
      outcome('pi', {
        goals: [
          { figure: 'ratios.efficiency', op: '>=', value: 0.9 },
          { figure: 'ratios.endToEndEfficiency', op: '>=', value: 0.8, optional: 'no e2e rounds' },
        ],
        figures: { jobMs: 10 },
        baseline: {},
        ratios: { efficiencyRenamed: 0.95 },
      }),
    ],
    run,
  );
  assert.deepEqual(
    s.rows.map((r) => [r.status, r.value, r.note]),
    [
      ['not measured', null, undefined],
      ['skipped', null, 'no e2e rounds'],
    ],
  );
});

test('a benchmark that failed gets a failed row, after the goals of the results it did write', () => {
  const s = buildSummary(
    [
      outcome('crashed', undefined, 1),
      outcome('killed', undefined, 'SIGKILL'),
      outcome(
        'tree',
        {
          goals: [{ figure: 'figures.p50', op: '<=', value: 300 }],
          figures: { p50: 400 },
          baseline: {},
          ratios: {},
        },
        1,
      ),
      outcome('silent', undefined, 0),
    ],
    run,
  );
  assert.deepEqual(
    s.rows.map((r) => [r.benchmark, r.status, r.note ?? '']),
    [
      ['crashed', 'failed', 'exited 1; wrote no results'],
      ['killed', 'failed', 'exited SIGKILL; wrote no results'],
      ['tree', 'missed', ''],
      ['tree', 'failed', 'exited 1'],
      ['silent', 'failed', 'wrote no results'],
    ],
  );
  assert.equal(s.counts.failed, 4);
});

test('a benchmark that declares no goals says so, and bad goals are a failure naming the entry', () => {
  const s = buildSummary(
    [
      outcome('bare', { figures: { x: 1 }, baseline: {}, ratios: {} }),
      outcome('bad', { goals: [{ figure: 'nowhere.x', op: '<=', value: 1 }], figures: {} }),
    ],
    run,
  );
  assert.equal(s.rows[0]?.status, 'no goals');
  assert.equal(s.rows[1]?.status, 'failed');
  assert.match(s.rows[1]?.note ?? '', /bad\.json: goal 0 needs a figure .*nowhere\.x/);
});

test('a smoke run keeps the figures but gives them no verdict, and its table says why', () => {
  const s = buildSummary(
    [
      outcome('latency', {
        goals: latencyGoals,
        figures: { jobP50Ms: 9, jobP99Ms: 1 },
        baseline: {},
        ratios: {},
      }),
    ],
    { ...run, smoke: true },
  );
  assert.deepEqual(
    s.rows.map((r) => [r.status, r.verdict]),
    [
      ['not comparable', 'missed'],
      ['not comparable', 'met'],
      ['not measured', undefined],
    ],
  );
  const text = formatSummary(s);
  assert.match(text.split('\n')[0] ?? '', /SMOKE.*NOT comparable/);
  assert.doesNotMatch(text, /\bmet\b|\bmissed\b/);
});

test('the table shows every row with its goal in symbols and the load, and counts the statuses', () => {
  const s = buildSummary(
    [
      outcome('latency', {
        goals: latencyGoals,
        figures: { jobP50Ms: 0.4321, jobP99Ms: 12_345.6 },
        baseline: {},
        ratios: { job100VsRaw: 0.5 },
      }),
      { name: 'rpc', exit: 1 },
    ],
    run,
  );
  const lines = formatSummary(s).split('\n');
  assert.match(
    lines[1] ?? '',
    /^benchmark\s+figure\s+value\s+goal\s+status\s+load 1m mean \/ max$/,
  );
  assert.match(lines[3] ?? '', /^latency\s+p50\s+0\.432\s+≤ 0\.5\s+met\s+1\.2 \/ 2\.5$/);
  assert.match(lines[4] ?? '', /^latency\s+jobP99Ms\s+12,346\s+≤ 2\s+missed\s+1\.2 \/ 2\.5$/);
  assert.match(lines[5] ?? '', /^latency\s+job100VsRaw\s+0\.500\s+≥ 0\.9\s+missed/);
  assert.match(lines[6] ?? '', /^rpc\s+—\s+—\s+failed: exited 1; wrote no results\s+—$/);
  assert.match(lines.at(-1) ?? '', /^1 met, 2 missed, 1 failed\. Load: .* on 2 CPUs/);
});

test('figures are looked up by section and key, keys with dots included; only finite numbers count', () => {
  const r = { figures: { 'noCombine.a.ms': 3, nan: Number.NaN, text: '1' }, ratios: { x: 0 } };
  assert.equal(figureOf(r, 'figures.noCombine.a.ms'), 3);
  assert.equal(figureOf(r, 'ratios.x'), 0);
  assert.equal(figureOf(r, 'figures.nan'), undefined);
  assert.equal(figureOf(r, 'figures.text'), undefined);
  assert.equal(figureOf(r, 'baseline.x'), undefined);
});

test('verdicts for every operator, at and either side of the goal', () => {
  const at = (op: Goal['op'], v: number) => verdict(v, { figure: 'figures.x', op, value: 1 });
  assert.deepEqual(
    (['<=', '>=', '<', '>', '=='] as const).map((op) => [at(op, 0.9), at(op, 1), at(op, 1.1)]),
    [
      ['met', 'met', 'missed'],
      ['missed', 'met', 'met'],
      ['met', 'missed', 'missed'],
      ['missed', 'missed', 'met'],
      ['missed', 'met', 'missed'],
    ],
  );
  assert.equal(verdict(undefined, { figure: 'figures.x', op: '<=', value: 1 }), 'not measured');
});

test('parseGoals names what is wrong with an entry and what was expected', () => {
  assert.throws(() => parseGoals({}, 'x.json'), /x\.json: goals must be a list, got \{\}/);
  assert.throws(
    () => parseGoals([{ figure: 'figures.a', op: '=<', value: 1 }], 'x.json'),
    /goal 0 needs an op, one of <= >= < > ==, got .*"=<"/,
  );
  assert.throws(
    () => parseGoals([{ figure: 'figures.a', op: '<=', value: 'fast' }], 'x.json'),
    /goal 0 needs a finite number as value/,
  );
  assert.throws(
    () => parseGoals([{ figure: 'figures.a', op: '<=', value: 1, what: 7 }], 'x.json'),
    /goal 0 has a what that is not a string/,
  );
  assert.throws(
    () =>
      parseGoals(
        Array.from({ length: 101 }, () => ({})),
        'x.json',
      ),
    /101 goals, at most 100/,
  );
  assert.deepEqual(parseGoals([{ figure: 'ratios.a', op: '==', value: 0, extra: 1 }], 'x.json'), [
    { figure: 'ratios.a', op: '==', value: 0 },
  ]);
});

test('values show enough digits to read', () => {
  assert.deepEqual([null, 0, 0.0004, 0.4321, 2.345, 45.67, 1234.5, 45_292].map(formatValue), [
    '—',
    '0',
    '0.000',
    '0.432',
    '2.35',
    '45.7',
    '1,235',
    '45,292',
  ]);
});
