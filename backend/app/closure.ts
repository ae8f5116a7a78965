import { type Node, parse } from 'acorn';
import { analyze } from 'periscopic';
import type { FunctionSpec } from '../protocol/executor.js';

/**
 * Turns a function given to a transformation into what travels to executors: its source text and
 * the values it uses, passed explicitly (`map((x, env) => x * env.k, { k })`). Before anything
 * runs, the source is parsed and every free variable that an executor would not have is named
 * in an error that says how to pass it. `import()` calls are redirected so that modules resolve
 * from the application's folder on the executor, as `require` does.
 */

/** Names every executor has: JavaScript's and Node's globals, plus what a task function is given. */
const executorGlobals = new Set<string>([
  ...Object.getOwnPropertyNames(globalThis),
  'require',
  'undefined',
  'NaN',
  'Infinity',
  'arguments',
  '__wickImport',
  // esbuild's helpers: keepNames' (tsx emits it for inner named functions) and its name for
  // require in an ES module bundle (wick submit's). Executors define both.
  '__name',
  '__require',
]);

export class ClosureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClosureError';
  }
}

export function prepareFunction(fn: unknown, what: string, env?: unknown): FunctionSpec {
  if (typeof fn !== 'function') {
    throw new ClosureError(`${what} expects a function, got ${typeof fn}`);
  }
  const source = fn.toString();
  let ast: Node;
  try {
    ast = parse(`(${source})`, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: false,
    });
  } catch {
    throw new ClosureError(
      `The function given to ${what} cannot be shipped to executors: its source is not a function expression (write it as (x) => … or function (x) { … }, not as a method or a bound/native function)`,
    );
  }
  const { globals } = analyze(ast as unknown as Parameters<typeof analyze>[0]);
  // In the order they appear in the source, so that the first one named is the first one written.
  const missing = [...globals]
    .filter(([name]) => !executorGlobals.has(name))
    .sort(([, a], [, b]) => (a as unknown as Node).start - (b as unknown as Node).start)
    .map(([name]) => name);
  if (missing.length > 0) {
    const name = missing[0] as string;
    const also = missing.length > 1 ? ` (and also ${missing.slice(1).join(', ')})` : '';
    throw new ClosureError(
      `The function given to ${what} uses ${name}${also}, which executors would not have: functions travel as source text without their surroundings. Pass the value explicitly, e.g. ${what}((x, env) => … env.${name} …, { ${name} }), or require() it inside the function.`,
    );
  }
  if (env !== undefined) checkJson(env, what);
  const shipped = redirectImports(source, ast);
  return env === undefined ? { source: shipped } : { source: shipped, env };
}

/** Values cross the wire as JSON; say which one would not survive the trip. */
function checkJson(value: unknown, what: string): void {
  const bad = findNonJson(value, 'env');
  if (bad) {
    throw new ClosureError(`The values passed to ${what} must be plain JSON data, but ${bad}`);
  }
}

/**
 * The first value under `v` that JSON would lose or refuse, described by its path. `ancestors` holds
 * the objects on the path from the root, so a cycle is refused while an object that is merely
 * shared (referenced twice, as JSON copies it) is fine.
 */
function findNonJson(v: unknown, path: string, ancestors = new Set<unknown>()): string | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : `${path} is ${v}`;
  if (typeof v !== 'object') return `${path} is a ${typeof v}`;
  if (ancestors.has(v)) return `${path} refers to itself`;
  const proto = Object.getPrototypeOf(v);
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
    return `${path} is a ${(v as object).constructor?.name ?? 'non-plain object'}`;
  }
  ancestors.add(v);
  try {
    const entries: [string, unknown][] = Array.isArray(v)
      ? v.map((x, i) => [`${path}[${i}]`, x])
      : Object.entries(v).map(([k, x]) => [`${path}.${k}`, x]);
    for (const [p, x] of entries) {
      const bad = findNonJson(x, p, ancestors);
      if (bad) return bad;
    }
    return undefined;
  } finally {
    ancestors.delete(v);
  }
}

/** Rewrites each `import(` to `__wickImport(`, which the executor resolves from the app's folder. */
function redirectImports(source: string, ast: Node): string {
  const starts: number[] = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    const n = node as { type?: string; start?: number };
    if (n.type === 'ImportExpression' && typeof n.start === 'number') starts.push(n.start - 1);
    for (const [k, child] of Object.entries(node)) if (k !== 'loc') visit(child);
  };
  visit(ast);
  if (starts.length === 0) return source;
  let out = source;
  for (const s of starts.sort((a, b) => b - a)) {
    out = `${out.slice(0, s)}__wickImport${out.slice(s + 'import'.length)}`;
  }
  return out;
}
