/**
 * The `wick` an application run by `wick submit` imports: dist/cli/lib.mjs (written by
 * scripts/build.mjs), which hands it the library the CLI has loaded, or dist/wick-lib.cjs when it
 * is imported some other way.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { assertBuilt, repoRoot, runWick } from '../helpers/cli.js';

let root: string;
before(async () => {
  assertBuilt();
  root = await mkdtemp(join(tmpdir(), 'wick-run-app-test-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** The library's runtime exports, from its sources. */
async function libraryExports(): Promise<string> {
  return Object.keys(await import('../../backend/app/index.js'))
    .sort()
    .join(',');
}

test("a submitted application's `wick` is the library the CLI has loaded, every export of it", async () => {
  const app = join(root, 'names.mjs');
  await writeFile(
    app,
    `import * as wick from 'wick';
const cli = globalThis[Symbol.for('wick.library')];
console.log(Object.keys(wick).sort().join(','));
console.log(wick.WickContext === cli.WickContext && wick.RDD === cli.RDD);\n`,
  );
  // No context is created, so the master is never reached.
  const r = await runWick(['submit', '--master', 'wick://127.0.0.1:1', app]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), [await libraryExports(), 'true']);
});

test('imported outside the CLI, dist/cli/lib.mjs is dist/wick-lib.cjs', async () => {
  const facade = pathToFileURL(join(repoRoot, 'dist', 'cli', 'lib.mjs')).href;
  const script = `const wick = await import(${JSON.stringify(facade)});
const { createRequire } = await import('node:module');
const lib = createRequire(import.meta.url)(${JSON.stringify(join(repoRoot, 'dist', 'wick-lib.cjs'))});
console.log(Object.keys(wick).sort().join(','));
console.log(wick.WickContext === lib.WickContext);`;
  const p = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(p.status, 0, p.stderr);
  assert.deepEqual(p.stdout.trim().split('\n'), [await libraryExports(), 'true']);
});
