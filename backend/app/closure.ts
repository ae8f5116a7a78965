import { type Node, parse } from 'acorn';
import { analyze } from 'periscopic';
import type { FunctionSpec } from '../protocol/task.js';
import { layOut } from './functionOrigin.js';
import type { FreeName, ModuleScopes } from './moduleScopes.js';

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

/** The application's code tree, when it runs from one (wick submit); see ModuleScopes. */
let shippedCode: ModuleScopes | undefined;

export function useShippedCode(scopes: ModuleScopes | undefined): void {
  shippedCode = scopes;
}

/** The free names a definition shipped by value may bring in, at most (a cycle stops sooner). */
const MAX_DEFINITIONS = 200;

export function prepareFunction(fn: unknown, what: string, env?: unknown): FunctionSpec {
  if (typeof fn !== 'function') {
    throw new ClosureError(`${what} expects a function, got ${typeof fn}`);
  }
  const source = fn.toString();
  const { ast, missing } = freeNames(source, what);
  const spec: FunctionSpec = { source };
  const caller = shippedCode?.callerModule();
  const defs: Definition[] = [];
  if (caller && shippedCode) {
    spec.module = caller.path;
    if (missing.length > 0) {
      const names = shippedCode.resolve(caller.path, source, missing, caller);
      if (names) {
        const bindings: Record<string, string> = {};
        resolveNames(shippedCode, caller.path, names, bindings, defs, what, new Set());
        if (Object.keys(bindings).length > 0) spec.bindings = bindings;
        if (defs.length > 0) spec.defs = defs.map((d) => d.source);
        missing.length = 0;
      }
    }
  }
  if (missing.length > 0) throw cannotShip(what, missing);
  if (env !== undefined) {
    checkJson(env, what);
    spec.env = env;
  }
  const laid = caller && shippedCode ? layOutSpec(shippedCode, caller, source, defs) : undefined;
  if (laid) {
    spec.origin = laid.origin;
    if (laid.defs.length > 0) spec.defs = laid.defs;
    spec.source = redirectImports(laid.source, parseFunction(laid.source, what));
  } else {
    spec.source = redirectImports(source, ast);
  }
  return spec;
}

/** A definition shipped by value, and where it is in its module's text. */
interface Definition {
  source: string;
  at: number;
}

/** The function (and its definitions) laid out as in the original file (functionOrigin.ts). */
function layOutSpec(
  code: ModuleScopes,
  caller: { path: string; line: number; column: number },
  source: string,
  defs: Definition[],
) {
  const found = code.locate(caller.path, source, caller);
  if (!found) return undefined;
  return layOut(found.file, found.text, [
    ...defs.map((d) => ({
      text: d.source,
      at: d.at,
      kind: 'def' as const,
      // `const f = ` written before an initializer (moduleScopes.ts) is not in the module's text.
      lead: found.text.startsWith(d.source, d.at) ? 0 : d.source.indexOf(' = ') + 3,
    })),
    { text: source, at: found.at, kind: 'function' as const },
  ]);
}

function parseFunction(source: string, what: string): Node {
  return freeNames(source, what).ast;
}

/**
 * What parsing a source gave, by the source: an interactive user runs the same few functions again
 * and again, and every action prepares its function anew, where parsing and walking the tree were
 * most of what the driver spent before scheduling (bench/latency.bench.ts, phase "closure"). Both
 * depend on the source alone. Bounded: emptied when full.
 */
const parsed = new Map<string, { ast: Node; missing: readonly string[] }>();
const redirected = new Map<string, string>();
const PARSED_MAX = 512;

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= PARSED_MAX) cache.clear();
  cache.set(key, value);
  return value;
}

/**
 * Parses a function's source; its free names that an executor would not have, in source order.
 * A `definition` (a declaration shipped by value: `function f…`, `class C…`, `const f = …;`) is
 * parsed as the statement it is, not as an expression.
 */
function freeNames(
  source: string,
  what: string,
  definition = false,
): { ast: Node; missing: string[] } {
  const key = `${definition ? 'statement' : 'expression'}\0${source}`;
  const known = parsed.get(key);
  // A copy: callers empty the list once they have resolved its names.
  if (known) return { ast: known.ast, missing: [...known.missing] };
  let ast: Node;
  try {
    ast = parse(definition ? source : `(${source})`, {
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
  const missing = [...globals]
    .filter(([name]) => !executorGlobals.has(name))
    .sort(([, a], [, b]) => (a as unknown as Node).start - (b as unknown as Node).start)
    .map(([name]) => name);
  remember(parsed, key, { ast, missing: [...missing] });
  return { ast, missing };
}

/**
 * Adds how each free name travels to `bindings` (by reference: the module to ask) and `defs` (by
 * value: the definition's source, whose own free names are resolved in turn).
 */
function resolveNames(
  code: ModuleScopes,
  module: string,
  names: Map<string, FreeName>,
  bindings: Record<string, string>,
  defs: Definition[],
  what: string,
  seen: Set<string>,
): void {
  const local: string[] = [];
  for (const [name, how] of names) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (how.kind === 'binding') bindings[name] = how.module;
    else if (how.kind === 'definition') {
      if (seen.size > MAX_DEFINITIONS) throw cannotShip(what, [name]);
      defs.push({ source: how.source, at: how.at });
      const inner = freeNames(how.source, what, true).missing;
      const innerNames = code.resolveDefinition(module, how.at, inner);
      if (innerNames) resolveNames(code, module, innerNames, bindings, defs, what, seen);
    } else if (how.kind === 'entryVariable') {
      throw new ClosureError(
        `The function given to ${what} uses ${name}, a top-level variable of the application's main file, which executors do not run: pass the value explicitly, e.g. ${what}((x, env) => … env.${name} …, { ${name} }), or move it to a module of its own and import it.`,
      );
    } else local.push(name);
  }
  if (local.length > 0) throw cannotShip(what, local);
}

function cannotShip(what: string, missing: readonly string[]): ClosureError {
  const name = missing[0] as string;
  const also = missing.length > 1 ? ` (and also ${missing.slice(1).join(', ')})` : '';
  return new ClosureError(
    `The function given to ${what} uses ${name}${also}, which executors would not have: functions travel as source text without their surroundings (what their module imports or declares at top level travels with them). Pass the value explicitly, e.g. ${what}((x, env) => … env.${name} …, { ${name} }), or require() it inside the function.`,
  );
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
  return redirected.get(source) ?? remember(redirected, source, rewriteImports(source, ast));
}

function rewriteImports(source: string, ast: Node): string {
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
