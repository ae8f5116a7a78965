/**
 * The compiled modules of an application's tree hold the user's code and only what Wick must add:
 * the binding lookup shipped functions need, and a CommonJS `require` only where the module names
 * `require` (every module-level name shows in the debugger's Module scope).
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
import { BINDING_EXPORT } from '../../backend/util/shippedCode.js';

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
    "import { twice } from './pure.js';\nimport { sep } from './requiring.js';\nexport const answer: number = twice(21);\nexport const separator = sep;\n",
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
    assert.match(t, new RegExp(`export function ${BINDING_EXPORT}\\(`), `${name}: lookup kept`);
  }
  assert.match(await text('requiring.ts'), /__wickCreateRequire\(import\.meta\.url\)/);

  // The tree runs: the module that requires has its require, and lookups see each module's names.
  const main = await import(pathToFileURL(outputPath(graph, out, join(src, 'main.ts'))).href);
  assert.equal(main.answer, 42);
  assert.equal(main.separator, '/');
  assert.equal(main[BINDING_EXPORT]('twice')(5), 10);
  const req = await import(pathToFileURL(outputPath(graph, out, join(src, 'requiring.ts'))).href);
  assert.equal(req[BINDING_EXPORT]('require')('node:path').sep, '/');
});
