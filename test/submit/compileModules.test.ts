/**
 * The compiled modules of an application's tree hold the user's code and only what Wick must add:
 * the binding lookup shipped functions need (registered, not declared), and a CommonJS `require`
 * only where the module names `require`: every module-level name shows in the debugger's Module
 * scope, which is read here as a debugger reads it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { compileModules, outputPath } from '../../backend/submit/compileModules.js';
import { findModuleGraph } from '../../backend/submit/moduleGraph.js';
import { registeredBinding } from '../../backend/util/shippedCode.js';
import { repoRoot } from '../helpers/cli.js';
import { moduleScopeAt } from '../helpers/moduleScope.js';

const execFileAsync = promisify(execFile);

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
    "declare const require: (id: string) => { sep: string };\nexport const sep: string = require('node:path').sep;\nexport function pause(): string {\n  debugger;\n  return sep;\n}\n",
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
  const requiring = await text('requiring.ts');
  assert.match(requiring, /\.createRequire\(import\.meta\.url\)/);
  assert.doesNotMatch(requiring, /__wick/, "requiring.ts: no name of Wick's declared");

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
  const requiringModule = await import(reqUrl);
  const req = registeredBinding(reqUrl)?.('require') as (id: string) => { sep: string };
  assert.equal(req('node:path').sep, '/');

  // Stopped in the user's module, a debugger lists the user's names and nothing of Wick's.
  const names = await moduleScopeAt(() => main.pause());
  assert.deepEqual(names.sort(), ['answer', 'name', 'pause', 'separator', 'sep', 'twice'].sort());
  // The module that names require has it, and no helper beside it: neither Wick's nor esbuild's
  // (__require, blanked out with its positions kept).
  assert.deepEqual((await moduleScopeAt(() => requiringModule.pause())).sort(), [
    'pause',
    'require',
    'sep',
  ]);
  assert.doesNotMatch(requiring, /__require/);
});

test("on a Node without process.getBuiltinModule, a module's require comes from the host's offer", async () => {
  const src = join(root, 'old-node');
  const out = join(root, 'old-node-out');
  await mkdir(src, { recursive: true });
  await writeFile(
    join(src, 'main.ts'),
    "declare const require: (id: string) => { sep: string };\nexport const sep: string = require('node:path').sep;\n",
  );
  const graph = await findModuleGraph(esbuild.build, join(src, 'main.ts'));
  await compileModules(esbuild.build, graph, out);
  const url = pathToFileURL(outputPath(graph, out, join(src, 'main.ts'))).href;
  const shipped = pathToFileURL(join(repoRoot, 'backend', 'util', 'shippedCode.ts')).href;
  // Node before 20.16, in a process of its own: without the host's offer the banner cannot work.
  const run = (offer: boolean) =>
    execFileAsync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '--eval',
        `delete process.getBuiltinModule;
         ${offer ? `(await import(${JSON.stringify(shipped)})).offerModuleApi();` : ''}
         const m = await import(${JSON.stringify(url)});
         console.log(m.sep);`,
      ],
      { cwd: repoRoot },
    );
  assert.equal((await run(true)).stdout.trim(), '/');
  await assert.rejects(
    run(false),
    /Cannot read properties of undefined \(reading 'createRequire'\)/,
  );
});

test("esbuild's __require helper is blanked out in place: an error's stack still names the user's line", async () => {
  const src = join(root, 'thrower');
  const out = join(root, 'thrower-out');
  await mkdir(src, { recursive: true });
  // Line 4 throws, after a require and a require.resolve that esbuild routes through __require.
  await writeFile(
    join(src, 'main.ts'),
    "declare const require: { (id: string): { sep: string }; resolve(id: string): string };\nexport const sep: string = require('node:path').sep;\nexport const where: string = require.resolve('node:os');\nexport function boom(): never { throw new Error('from line 4'); }\n",
  );
  const graph = await findModuleGraph(esbuild.build, join(src, 'main.ts'));
  await compileModules(esbuild.build, graph, out);
  const file = outputPath(graph, out, join(src, 'main.ts'));
  const text = await readFile(file, 'utf8');
  assert.doesNotMatch(text, /__require/);
  assert.match(text, / {2}require\.resolve\("node:os"\)/);
  // With source maps on, as a driver runs (--enable-source-maps), the frame is the user's line.
  const { stdout } = await execFileAsync(process.execPath, [
    '--enable-source-maps',
    '--input-type=module',
    '--eval',
    `const m = await import(${JSON.stringify(pathToFileURL(file).href)});
     try { m.boom(); } catch (e) { console.log(m.sep, m.where, e.stack.split('\\n')[1]); }`,
  ]);
  assert.match(stdout, /^\/ node:os .*main\.ts:4:\d+\)?$/m, stdout);
});
