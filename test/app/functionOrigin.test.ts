/**
 * Shipped functions laid out as in the user's file (app/functionOrigin.ts) and compiled there
 * (task/compile.ts): what an executor's stack says is the original file, line and column, though
 * esbuild dropped comments and blank lines and re-indented the text.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import vm from 'node:vm';
import { parseExpressionAt } from 'acorn';
import { transformSync } from 'esbuild';
import { layOut } from '../../backend/app/functionOrigin.js';
import { bodyOf, placeOf } from '../../backend/app/task/compile.js';
import type { FunctionSpec } from '../../backend/protocol/task.js';
import { parseStackFrames } from '../../backend/shared/stackFrames.js';

const ORIGINAL = '/home/u/proj/throws.ts';

/** Compiles `ts` as wick submit does (esbuild, inline source map) into a module of its own. */
function compiled(ts: string): string {
  return transformSync(ts, {
    loader: 'ts',
    format: 'esm',
    sourcemap: 'inline',
    sourcefile: ORIGINAL,
    target: 'node20',
  }).code;
}

/** Where `marker` (a substring of a function) is in the module, and that function's text. */
function functionAt(text: string, start: string): { text: string; at: number } {
  const at = text.indexOf(start);
  assert.ok(at >= 0, `${start} not in:\n${text}`);
  const node = parseExpressionAt(text, at, { ecmaVersion: 'latest', sourceType: 'module' });
  return { text: text.slice(at, node.end), at };
}

/** Runs the laid-out spec as an executor compiles it; the first frame of what it throws. */
function thrownAt(spec: FunctionSpec, arg: unknown) {
  const fn = vm.compileFunction(bodyOf(spec), [], placeOf(spec, 'wick-task-function.js'))() as (
    x: unknown,
  ) => unknown;
  try {
    fn(arg);
  } catch (err) {
    return parseStackFrames((err as Error).stack ?? '')[0];
  }
  assert.fail('it did not throw');
}

/** 1-based line and column of the first `needle` in the original. */
function where(ts: string, needle: string, after = 0): { line: number; column: number } {
  const i = ts.indexOf(needle, after);
  const before = ts.slice(0, i).split('\n');
  return { line: before.length, column: (before.at(-1) as string).length + 1 };
}

const TS = `import { WickContext } from 'wick';

const wc = await WickContext.create({ appName: 'throws' });
const out = await wc
  .parallelize([1, 2, 3, 4], 2)
  .map((x: number): number => {
    // the third element is bad

    const y: number = x * 2;
        if (y === 6) throw new Error(\`bad value \${x}\`);

    /* a comment
       over lines */
    if (y === 8) throw new RangeError('too big');
    return y;
  })
  .collect();
`;

test('a function with comments, blank lines and odd indentation throws at its original line and column', () => {
  const module = compiled(TS);
  const fn = functionAt(module, '(x) =>');
  const laid = layOut('/tmp/tree/throws.mjs', module, [{ ...fn, kind: 'function' }]);
  assert.ok(laid, 'laid out');
  assert.equal(laid.origin.file, ORIGINAL);
  assert.deepEqual(
    { line: laid.origin.line, column: laid.origin.column },
    where(TS, '(x: number)'),
  );
  const spec: FunctionSpec = { source: laid.source, origin: laid.origin };
  const six = thrownAt(spec, 3);
  const expected6 = where(TS, 'new Error');
  assert.deepEqual(
    { file: six?.file, line: six?.line, column: six?.column },
    {
      file: ORIGINAL,
      ...expected6,
    },
  );
  const eight = thrownAt(spec, 4);
  assert.deepEqual(
    { file: eight?.file, line: eight?.line, column: eight?.column },
    { file: ORIGINAL, ...where(TS, 'new RangeError') },
  );
  assert.equal(laid.placed, laid.lines, 'every line placed');
});

test('a template literal over lines keeps its text: no line break is added inside it', () => {
  const ts = `const f = (x: number) => {


  const s = \`line one
  line two \${x}\`;


  if (s.length > 0) throw new Error(s);
};
`;
  const module = compiled(ts);
  const fn = functionAt(module, '(x) =>');
  const laid = layOut('/tmp/tree/t.mjs', module, [{ ...fn, kind: 'function' }]);
  assert.ok(laid);
  const run = vm.compileFunction(bodyOf({ source: laid.source, origin: laid.origin }), [])() as (
    x: number,
  ) => void;
  assert.throws(() => run(5), { message: 'line one\n  line two 5' });
  const frame = thrownAt({ source: laid.source, origin: laid.origin }, 5);
  assert.equal(frame?.line, where(ts, 'new Error').line);
});

test('definitions shipped with a function keep their own lines too', () => {
  const ts = `function square(v: number): number {
  // checks first
  if (v > 2) throw new Error('square of ' + v);
  return v * v;
}

export const g = (x: number) => {

  return square(x);
};
`;
  const module = compiled(ts);
  const def = functionAt(module, 'function square');
  const fn = functionAt(module, '(x) =>');
  const laid = layOut('/tmp/tree/d.mjs', module, [
    { ...def, kind: 'def' },
    { ...fn, kind: 'function' },
  ]);
  assert.ok(laid);
  const spec: FunctionSpec = { source: laid.source, defs: laid.defs, origin: laid.origin };
  const fnBody = vm.compileFunction(bodyOf(spec), [], placeOf(spec, 'x.js'))() as (
    x: number,
  ) => void;
  try {
    fnBody(3);
    assert.fail('it did not throw');
  } catch (err) {
    const frames = parseStackFrames((err as Error).stack ?? '');
    assert.deepEqual(
      frames.slice(0, 2).map((f) => `${f.file}:${f.line}:${f.column}`),
      [
        `${ORIGINAL}:${where(ts, 'new Error').line}:${where(ts, 'new Error').column}`,
        `${ORIGINAL}:${where(ts, 'square(x)').line}:${where(ts, 'square(x)').column}`,
      ],
    );
  }
});

test('a module without a source map: no origin (the function ships as before)', () => {
  const text = 'export const f = (x) => {\n  throw new Error("x");\n};\n';
  const fn = functionAt(text, '(x) =>');
  assert.equal(layOut('/tmp/tree/plain.mjs', text, [{ ...fn, kind: 'function' }]), undefined);
});
