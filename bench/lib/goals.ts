/**
 * A benchmark's goals, declared in its own file beside the code that measures them and written
 * into its results (results.ts), so that the one table of `npm run bench` (summary.ts) reads them
 * from where they cannot drift: rename a figure and its goal shows "not measured" (and the smoke
 * test fails), change a goal and the table changes with it.
 */

export type GoalOp = '<=' | '>=' | '<' | '>' | '==';

/** Where a figure lives in a results file: its section, a dot, its key (which may hold dots). */
export type FigurePath = `${'figures' | 'baseline' | 'ratios'}.${string}`;

export interface Goal {
  /** The figure the goal is about, e.g. 'figures.jobP50Ms' or 'ratios.tasksPerSecond'. */
  figure: FigurePath;
  op: GoalOp;
  value: number;
  /** What the figure is, in a few words, for the table (the figure's key when absent). */
  what?: string;
  /**
   * Why the figure may be missing from a run that succeeded (a size the smoke run skips, an
   * optional part): without it, a missing figure is a benchmark that rotted.
   */
  optional?: string;
}

export type Verdict = 'met' | 'missed' | 'not measured';

/** The figure a goal names in a results object, or undefined when it is not there. */
export function figureOf(
  results: Partial<Record<'figures' | 'baseline' | 'ratios', Record<string, unknown>>>,
  figure: FigurePath,
): number | undefined {
  const dot = figure.indexOf('.');
  const section = results[figure.slice(0, dot) as 'figures' | 'baseline' | 'ratios'];
  const v = section?.[figure.slice(dot + 1)];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function isMet(value: number, op: GoalOp, goal: number): boolean {
  switch (op) {
    case '<=':
      return value <= goal;
    case '>=':
      return value >= goal;
    case '<':
      return value < goal;
    case '>':
      return value > goal;
    case '==':
      return value === goal;
  }
}

export function verdict(value: number | undefined, goal: Goal): Verdict {
  if (value === undefined) return 'not measured';
  return isMet(value, goal.op, goal.value) ? 'met' : 'missed';
}

const OPS: readonly string[] = ['<=', '>=', '<', '>', '=='];
const SECTIONS: readonly string[] = ['figures', 'baseline', 'ratios'];

/**
 * The goals of a results file, checked: what a benchmark wrote, read back by the runner. Throws
 * naming the bad entry and what was expected.
 */
export function parseGoals(raw: unknown, source: string): Goal[] {
  if (!Array.isArray(raw)) {
    throw new Error(`${source}: goals must be a list, got ${JSON.stringify(raw)}`);
  }
  if (raw.length > 100) throw new Error(`${source}: ${raw.length} goals, at most 100 expected`);
  return raw.map((g: unknown, i) => {
    const o = (typeof g === 'object' && g !== null ? g : {}) as Record<string, unknown>;
    const bad = (what: string) =>
      new Error(`${source}: goal ${i} ${what}, got ${JSON.stringify(g)?.slice(0, 200)}`);
    const figure = o.figure;
    if (
      typeof figure !== 'string' ||
      figure.length > 200 ||
      !SECTIONS.includes(figure.slice(0, figure.indexOf('.')))
    ) {
      throw bad('needs a figure "figures.KEY", "baseline.KEY" or "ratios.KEY"');
    }
    if (typeof o.op !== 'string' || !OPS.includes(o.op)) {
      throw bad(`needs an op, one of ${OPS.join(' ')}`);
    }
    if (typeof o.value !== 'number' || !Number.isFinite(o.value)) {
      throw bad('needs a finite number as value');
    }
    for (const k of ['what', 'optional'] as const) {
      const v = o[k];
      if (v !== undefined && (typeof v !== 'string' || v.length > 300)) {
        throw bad(`has a ${k} that is not a string of at most 300 characters`);
      }
    }
    return {
      figure: figure as FigurePath,
      op: o.op as GoalOp,
      value: o.value,
      ...(typeof o.what === 'string' ? { what: o.what } : {}),
      ...(typeof o.optional === 'string' ? { optional: o.optional } : {}),
    };
  });
}
