/**
 * The driver-side check of what a function given to a transformation may use: it travels to the
 * executors as source text, so a free variable is refused up front with a message that names it
 * and says how to pass it, and the values passed must survive a trip through JSON.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClosureError, prepareFunction } from '../../backend/app/closure.js';
import { FunctionCompiler } from '../../backend/app/task/compile.js';

function refusal(fn: unknown, what = 'map', env?: unknown): ClosureError {
  try {
    prepareFunction(fn, what, env);
  } catch (err) {
    assert.ok(err instanceof ClosureError, `a ClosureError, got ${String(err)}`);
    return err;
  }
  assert.fail('the function was accepted');
}

test('a free variable is named, with how to pass it instead', () => {
  const factor = 3;
  const err = refusal((x: number) => x * factor);
  assert.equal(
    err.message,
    'The function given to map uses factor, which executors would not have: functions travel as source text without their surroundings (what their module imports or declares at top level travels with them). Pass the value explicitly, e.g. map((x, env) => … env.factor …, { factor }), or require() it inside the function.',
  );
  // The name of the operation is the one the user called.
  assert.match(
    refusal((x: number) => x > factor, 'filter').message,
    /^The function given to filter uses factor,.* filter\(\(x, env\) => … env\.factor …, \{ factor \}\)/,
  );
});

test('several free variables: the first is named and the others listed', () => {
  const a = 1;
  const b = 2;
  const c = 3;
  const err = refusal((x: number) => x + a + b + c, 'flatMap');
  assert.match(err.message, /uses a \(and also b, c\), which executors would not have/);
});

test('free variables hidden in nested functions, default parameters and templates are found', () => {
  const secret = 's';
  assert.match(refusal((xs: string[]) => xs.map((x) => `${x}${secret}`)).message, /uses secret/);
  assert.match(refusal((x: string, y = secret) => x + y).message, /uses secret/);
  assert.match(refusal((x: number) => ({ [secret]: x })).message, /uses secret/);
});

test('what a function declares itself, or gets as parameters, is not free', () => {
  const ok = [
    (x: number, env: { k: number }) => x * env.k,
    ({ a, b: [c] }: { a: number; b: number[] }) => a + (c as number),
    (...xs: number[]) => xs.length,
    (x: number) => {
      const y = x + 1;
      let z = y;
      for (let i = 0; i < 2; i++) z += i;
      try {
        JSON.parse('{');
      } catch (e) {
        z += (e as Error).message.length;
      }
      class Box {
        v = z;
      }
      return new Box().v;
    },
    function fact(n: number): number {
      return n <= 1 ? 1 : n * fact(n - 1);
    },
    async (x: number) => await Promise.resolve(x),
    function* (x: number) {
      yield x;
    },
  ];
  for (const f of ok) assert.doesNotThrow(() => prepareFunction(f, 'map'), f.toString());
});

test('JavaScript and Node globals, require, import() and arguments are allowed', () => {
  const spec = prepareFunction(function (x: number) {
    const path = require('node:path');
    const s = JSON.stringify({
      m: Math.max(x, 1),
      b: Buffer.from('a').length,
      u: new URL('http://h/').host,
    });
    const home = process.env.HOME ?? '';
    // biome-ignore lint/complexity/noArguments: what is checked is that `arguments` is allowed
    console.log(typeof setTimeout, typeof structuredClone, typeof globalThis, arguments.length);
    return [path.sep, s, home.length, Number.NaN, Infinity, undefined];
  }, 'map');
  assert.ok(
    spec.source.includes("require('node:path')") || spec.source.includes('require("node:path")'),
  );
});

test('the env must be plain JSON data: a value that would not survive is named by its path', () => {
  const f = (x: number) => x;
  const cases: [unknown, RegExp][] = [
    [{ f: () => 1 }, /but env\.f is a function$/],
    [{ m: new Map() }, /but env\.m is a Map$/],
    [{ when: new Date(0) }, /but env\.when is a Date$/],
    [{ a: { b: [1, 2, undefined] } }, /but env\.a\.b\[2\] is a undefined$/],
    [{ n: Number.NaN }, /but env\.n is NaN$/],
    [{ big: 10n }, /but env\.big is a bigint$/],
    [{ s: Symbol('s') }, /but env\.s is a symbol$/],
    [{ inf: [Number.POSITIVE_INFINITY] }, /but env\.inf\[0\] is Infinity$/],
    [new (class Point {})(), /but env is a Point$/],
  ];
  for (const [env, expected] of cases) {
    const err = refusal(f, 'map', env);
    assert.match(err.message, /^The values passed to map must be plain JSON data, but /);
    assert.match(err.message, expected);
  }
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  assert.match(refusal(f, 'map', { c: cyclic }).message, /but env\.c\.self refers to itself$/);
});

test('JSON-able env values are accepted and travel as given, shared objects included', () => {
  const f = (x: number, env: unknown) => [x, env];
  const shared = { k: 1 };
  const env = {
    s: 'text',
    n: -1.5,
    b: true,
    nothing: null,
    list: [1, 'two', { three: [3] }],
    bare: Object.create(null) as object,
    again: shared,
    andAgain: [shared, shared],
  };
  const spec = prepareFunction(f, 'map', env);
  assert.equal(spec.env, env);
  assert.equal(prepareFunction(f, 'map', 7).env, 7);
  assert.equal(prepareFunction(f, 'map', 'plain').env, 'plain');
  assert.equal('env' in prepareFunction(f, 'map'), false, 'no env, no env field');
});

test('a method written in shorthand cannot be shipped, and the message says how to write it', () => {
  const obj = {
    double(x: number) {
      return x * 2;
    },
  };
  const err = refusal(obj.double);
  assert.match(
    err.message,
    /^The function given to map cannot be shipped to executors: its source is not a function expression/,
  );
  assert.match(err.message, /write it as \(x\) => … or function \(x\) \{ … \}, not as a method/);
  class Doubler {
    apply(x: number) {
      return x * 2;
    }
  }
  assert.match(refusal(new Doubler().apply).message, /not as a method/);
  assert.match(refusal(Math.max).message, /bound\/native function/);
  assert.match(refusal(((x: number) => x).bind(null)).message, /cannot be shipped/);
});

test('something that is not a function is refused by type', () => {
  assert.equal(refusal(42, 'reduce').message, 'reduce expects a function, got number');
  assert.equal(refusal(undefined, 'filter').message, 'filter expects a function, got undefined');
});

test('import() is redirected to the executor’s importer; nothing else in the source changes', () => {
  const f = async (x: string) => {
    // @ts-expect-error: resolved on the executor, from the application's folder
    const a = await import('./a.mjs');
    const note = 'import("not-this")';
    const { b } = await import(`./${x}.mjs`);
    return [a, b, note];
  };
  const spec = prepareFunction(f, 'map');
  const source = f.toString();
  assert.equal((source.match(/\bimport\(/g) ?? []).length, 3, 'two calls and the string');
  assert.equal((spec.source.match(/__wickImport\(/g) ?? []).length, 2);
  assert.ok(spec.source.includes('import("not-this")'), 'a string is left alone');
  assert.equal(spec.source.replaceAll('__wickImport(', 'import('), source);
  // A function without import() is shipped verbatim.
  const g = (x: number) => x + 1;
  assert.equal(prepareFunction(g, 'map').source, g.toString());
});

test('a function prepared again (its parse remembered) is checked and shipped as the first time', () => {
  const factor = 3;
  const free = (x: number) => x * factor;
  const first = refusal(free).message;
  assert.equal(refusal(free).message, first, 'its free names are still refused');
  assert.equal(refusal(free, 'filter').message, first.replaceAll('map', 'filter'));
  const f = async () => {
    // @ts-expect-error: resolved on the executor, from the application's folder
    return import('./a.mjs');
  };
  const spec = prepareFunction(f, 'map');
  assert.deepEqual(prepareFunction(f, 'map'), spec);
  assert.equal((spec.source.match(/__wickImport\(/g) ?? []).length, 1);
  // The env is checked every time, not remembered with the source.
  const g = (x: number, env: { k: number }) => x + env.k;
  assert.deepEqual(prepareFunction(g, 'map', { k: 1 }).env, { k: 1 });
  assert.match(refusal(g, 'map', { k: () => 1 }).message, /env\.k/);
});

test('what passes the check compiles on an executor, inner named functions included', async () => {
  const f = (x: number, env: { k: number }) => {
    const inc = (y: number) => y + env.k;
    function twice(z: number) {
      return z * 2;
    }
    return [twice(inc(x)), twice.name, inc.name];
  };
  const spec = prepareFunction(f, 'map', { k: 1 });
  const compiled = new FunctionCompiler({ appDir: process.cwd() }).compile(spec);
  assert.deepEqual(compiled(2, spec.env), [6, 'twice', 'inc']);
});
