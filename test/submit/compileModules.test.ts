/**
 * The compiled modules of an application's tree hold the user's code and only what Wick must add:
 * the binding lookup shipped functions need (registered, not declared), and a CommonJS `require`
 * only where the module names `require`: every module-level name shows in the debugger's Module
 * scope, which is read here as a debugger reads it.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { compileModules, outputPath } from '../../backend/submit/compileModules.js';
import { findModuleGraph } from '../../backend/submit/moduleGraph.js';
import { registeredBinding } from '../../backend/util/shippedCode.js';
import { moduleScopeAt } from '../helpers/moduleScope.js';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'wick-compile-test-'));
});
after(() => rm(root, { recursive: true, force: true }));

test('only a module that names require gets one; every module keeps its binding lookup', async () => {
  const src = join(root, 'src');
  const out = join(root, 'out');
  await mkdir(src, { recursive: true });
  await writeFile(
    join(src, 'main.ts'),
    "import { twice } from './pure.js';\nimport { sep } from './requiring.js';\nexport const answer: number = twice(21);\nexport const separator = sep;\nconst name = 'the user\\'s own';\nexport function pause(): string {\n  debugger;\n  return name;\n}\n",
  );
  await writeFile(join(src, 'pure.ts'), 'export const twice = (x: number): number => 2 * x;\n');
  await writeFile(
    join(src, 'requiring.ts'),
    "declare const require: (id: string) => { sep: string };\nexport const sep: string = require('node:path').sep;\n",
  );
  const graph = await findModuleGraph(esbuild.build, join(src, 'main.ts'));
  await compileModules(esbuild.build, graph, out);
  const text = (name: string) => readFile(outputPath(graph, out, join(src, name)), 'utf8');
  for (const name of ['main.ts', 'pure.ts']) {
    const t = await text(name);
    assert.doesNotMatch(t, /__wickCreateRequire|\brequire\b/, `${name}: no require added`);
    assert.match(t, /\[import\.meta\.url\] = function \(\) \{ return eval/, `${name}: lookup kept`);
    assert.doesNotMatch(t, /__wick/, `${name}: no name of Wick's declared`);
  }
  assert.match(await text('requiring.ts'), /__wickCreateRequire\(import\.meta\.url\)/);

  // The tree runs: the module that requires has its require, and lookups see each module's names.
  const mainUrl = pathToFileURL(outputPath(graph, out, join(src, 'main.ts'))).href;
  const main = await import(mainUrl);
  assert.equal(main.answer, 42);
  assert.equal(main.separator, '/');
  const lookup = registeredBinding(mainUrl);
  assert.ok(lookup, `main registered its lookup under ${mainUrl}`);
  assert.equal((lookup('twice') as (x: number) => number)(5), 10);
  // A user's top-level name that a parameter of the lookup could have hidden.
  assert.equal(lookup('name'), "the user's own");
  const reqUrl = pathToFileURL(outputPath(graph, out, join(src, 'requiring.ts'))).href;
  await import(reqUrl);
  const req = registeredBinding(reqUrl)?.('require') as (id: string) => { sep: string };
  assert.equal(req('node:path').sep, '/');

  // Stopped in the user's module, a debugger lists the user's names and nothing of Wick's.
  const names = await moduleScopeAt(() => main.pause());
  assert.deepEqual(names.sort(), ['answer', 'name', 'pause', 'separator', 'sep', 'twice'].sort());
});
