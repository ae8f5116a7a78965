/**
 * How a shipped function's free names travel, on a real code tree (bundleApp of an application in
 * a temp folder): the tree's own modules hand their functions to prepareFunction, so the caller
 * found on the stack is the compiled module that wrote each one, as in a driver run by wick
 * submit. Each spec is then compiled and run as an executor does (FunctionCompiler over the tree),
 * so a resolution is checked by its answer, not by its shape alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ClosureError, prepareFunction, useShippedCode } from '../../backend/app/closure.js';
import { ModuleScopes } from '../../backend/app/moduleScopes.js';
import { FunctionCompiler } from '../../backend/app/task/compile.js';
import type { FunctionSpec, TaskDescription } from '../../backend/protocol/task.js';
import { type BundledApp, bundleApp } from '../../backend/submit/bundle.js';
import { assertBuilt } from '../helpers/cli.js';

const HOOK = '__wickTestShip';

const helper = `
const SCALE: number = 10;
export function scale(x: number): number {
  return x * SCALE;
}
// Written here: SCALE is this module's, and travels by reference to it.
export function shipFromHelper() {
  return (globalThis as any).${HOOK}((x: number) => x * SCALE + 1);
}
`;

const app = `
import { scale } from './helper';
import { shipFromHelper } from './helper';

const ship = (globalThis as any).${HOOK};
const factor = 3;

function square(x: number): number {
  return x * x;
}
function squareThenScale(x: number): number {
  return scale(square(x));
}
const addOne = (x: number) => x + 1;
let reassigned = (x: number) => x;
reassigned = (x: number) => x * 2;
class Counter {
  constructor(readonly start: number) {}
  plus(x: number) { return this.start + x; }
}

function attempt(f: () => unknown): unknown {
  try {
    return f();
  } catch (err) {
    return err;
  }
}

function enclosing() {
  const local = 5;
  return ship((x: number) => x + local);
}
function shadowing() {
  const scale = (x: number) => -x;
  return ship((x: number) => scale(x));
}

export const results = {
  importBinding: ship((x: number) => scale(x)),
  entryFunction: ship((x: number) => squareThenScale(x) + square(1)),
  entryArrow: ship((x: number) => addOne(x)),
  entryClass: ship((x: number) => new Counter(100).plus(x)),
  fromHelper: shipFromHelper(),
  entryVariable: attempt(() => ship((x: number) => x * factor)),
  reassignedArrow: attempt(() => ship((x: number) => reassigned(x))),
  enclosingLocal: attempt(enclosing),
  shadowedImport: attempt(shadowing),
};
`;

let dir: string;
let bundled: BundledApp;
let results: Record<string, FunctionSpec | Error>;
let compiler: FunctionCompiler;
const savedCache = process.env.WICK_BUNDLE_CACHE;

before(async () => {
  assertBuilt();
  process.env.WICK_BUNDLE_CACHE = 'off';
  dir = await mkdtemp(join(tmpdir(), 'wick-test-scopes-'));
  await writeFile(join(dir, 'helper.ts'), helper);
  await writeFile(join(dir, 'app.ts'), app);
  bundled = await bundleApp(join(dir, 'app.ts'));
  useShippedCode(new ModuleScopes(bundled.root, bundled.code.entry));
  (globalThis as Record<string, unknown>)[HOOK] = (fn: unknown) => prepareFunction(fn, 'map');
  // Running the entry is the driver running its program: each ship() call is made from the tree.
  ({ results } = (await import(pathToFileURL(bundled.bundle).href)) as {
    results: Record<string, FunctionSpec | Error>;
  });
  compiler = new FunctionCompiler({ appDir: dir, codeRoot: bundled.root });
});

after(async () => {
  useShippedCode(undefined);
  delete (globalThis as Record<string, unknown>)[HOOK];
  if (savedCache === undefined) delete process.env.WICK_BUNDLE_CACHE;
  else process.env.WICK_BUNDLE_CACHE = savedCache;
  if (bundled) await rm(bundled.root, { recursive: true, force: true });
  if (dir) await rm(dir, { recursive: true, force: true });
});

function spec(name: string): FunctionSpec {
  const r = results[name];
  assert.ok(r && !(r instanceof Error), `${name}: ${r instanceof Error ? r.message : r}`);
  return r as FunctionSpec;
}

function refusal(name: string): ClosureError {
  const r = results[name];
  assert.ok(r instanceof ClosureError, `${name} should be refused, got ${JSON.stringify(r)}`);
  return r;
}

/** The spec run as an executor runs it: its bindings imported from the tree, then compiled. */
async function run(s: FunctionSpec, x: number): Promise<unknown> {
  const task = {
    source: { kind: 'array', data: [] },
    transformations: [{ kind: 'map', fn: s }],
    action: { kind: 'collect' },
  } as unknown as TaskDescription;
  await compiler.prepare(task);
  return compiler.compile(s)(x);
}

const entry = () => bundled.code.entry;
const entryScope = () => entry().replace(/\.mjs$/, '.wick-scope.mjs');

test('a name the entry imported travels as a binding of the entry’s scope module', async () => {
  const s = spec('importBinding');
  assert.equal(entry(), 'app.mjs');
  assert.equal(s.module, 'app.mjs');
  assert.deepEqual(s.bindings, { scale: entryScope() });
  assert.equal(s.defs, undefined);
  // scale uses its own module's SCALE: the module is imported whole on the executor.
  assert.equal(await run(s, 4), 40);
});

test('an entry function travels by value, with the entry functions and imports it uses', async () => {
  const s = spec('entryFunction');
  assert.deepEqual(s.bindings, { scale: entryScope() });
  assert.equal(s.defs?.length, 2);
  assert.match(s.defs?.[0] ?? '', /^function squareThenScale\(x\) \{/);
  // Laid out as in the original file (app/functionOrigin.ts): a def may begin with line breaks.
  assert.match(s.defs?.[1] ?? '', /^\s*function square\(x\) \{/);
  assert.equal(await run(s, 3), 3 * 3 * 10 + 1);
});

test('an entry const arrow function and an entry class travel by value', async () => {
  const arrow = spec('entryArrow');
  assert.deepEqual(arrow.defs, ['const addOne = (x) => x + 1;']);
  assert.equal(arrow.bindings, undefined);
  assert.equal(await run(arrow, 41), 42);
  const cls = spec('entryClass');
  // esbuild wrote `class Counter {}` as `var Counter = class {}`.
  assert.match(cls.defs?.[0] ?? '', /^const Counter = class \{/);
  assert.equal(await run(cls, 1), 101);
});

test('a top-level name of a module other than the entry travels as a binding of that module', async () => {
  const s = spec('fromHelper');
  assert.equal(s.module, 'helper.mjs');
  assert.deepEqual(s.bindings, { SCALE: 'helper.mjs' });
  assert.equal(await run(s, 2), 21);
});

test('a top-level variable of the entry is refused, saying how to pass it; so is an arrow it reassigns', () => {
  assert.equal(
    refusal('entryVariable').message,
    "The function given to map uses factor, a top-level variable of the application's main file, which executors do not run: pass the value explicitly, e.g. map((x, env) => … env.factor …, { factor }), or move it to a module of its own and import it.",
  );
  // Copied, it would be the value it was declared with, not the one it holds when the job runs.
  assert.match(
    refusal('reassignedArrow').message,
    /^The function given to map uses reassigned, a top-level variable of the application's main file/,
  );
});

test('a local of an enclosing function is refused, even when it shadows an import of the same name', () => {
  for (const [name, variable] of [
    ['enclosingLocal', 'local'],
    // esbuild renames a local that shadows a top-level name of its module (scale → scale2), and
    // the check sees the compiled module: the refusal names the renamed local.
    ['shadowedImport', 'scale2'],
  ] as const) {
    const err = refusal(name);
    assert.match(
      err.message,
      new RegExp(
        `^The function given to map uses ${variable}, which executors would not have: functions travel as source text without their surroundings`,
      ),
      name,
    );
  }
});
