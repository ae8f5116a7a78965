/**
 * A user's folder set up for `import … from 'wick'`: the tsconfig edits (comments kept, nothing
 * added twice), and the real compiler type-checking SparkPi and the New Job template against the
 * types the extension ships (dist/types), with nothing installed in the folder.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { parse } from 'jsonc-parser';
import { jobTemplate } from '../../../extension/project/jobTemplate.js';
import {
  NEW_TSCONFIG,
  pointAtWickTypes,
  setUpProjectTypes,
} from '../../../extension/project/projectTypes.js';
import { importsWick, resolvesWick } from '../../../extension/project/resolvesWick.js';

const root = resolve(import.meta.dirname, '../../..');
const shipped = join(root, 'dist', 'types');
const tsc = join(root, 'node_modules', '.bin', 'tsc');

function folder(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-project-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** tsc's diagnostics for the folder's tsconfig, one per line ('' when it compiles). */
function typeCheck(dir: string): string {
  const r = spawnSync(tsc, ['-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`.trim();
}

test("without the set-up, SparkPi does not type-check: no 'wick', no Node", (t) => {
  const dir = folder(t);
  copyFileSync(join(root, 'examples', 'pi.ts'), join(dir, 'pi.ts'));
  const bare = structuredClone(NEW_TSCONFIG) as { compilerOptions: Record<string, unknown> };
  delete bare.compilerOptions.paths;
  delete bare.compilerOptions.typeRoots;
  bare.compilerOptions.types = [];
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(bare));
  const errors = typeCheck(dir);
  assert.match(errors, /Cannot find module 'wick'/);
  assert.match(errors, /Cannot find name 'process'/);
});

test('after the set-up, SparkPi and the New Job template type-check with no error', async (t) => {
  const dir = folder(t);
  copyFileSync(join(root, 'examples', 'pi.ts'), join(dir, 'pi.ts'));
  writeFileSync(join(dir, 'job.ts'), jobTemplate('job', 'job.ts'));
  const { written } = await setUpProjectTypes(dir, shipped);
  assert.deepEqual(written, ['.wick/types/', 'tsconfig.json']);
  assert.ok(resolvesWick(dir));
  assert.equal(typeCheck(dir), '');
  // And a mistake against Wick's API is caught, at its line: the types are real, not `any`.
  writeFileSync(
    join(dir, 'wrong.ts'),
    "import { WickContext } from 'wick';\nWickContext.create({ appName: 7 });\n",
  );
  assert.match(
    typeCheck(dir),
    /wrong\.ts\(2,22\): error TS2322: Type 'number' is not assignable to type 'string'/,
  );
  // The folder's .wick ignores itself in git.
  assert.equal(
    readFileSync(join(dir, '.wick', '.gitignore'), 'utf8')
      .split('\n')
      .at(-2),
    '*',
  );
});

test('an existing tsconfig.json is edited in place: comments kept, its settings kept', async (t) => {
  const dir = folder(t);
  copyFileSync(join(root, 'examples', 'pi.ts'), join(dir, 'pi.ts'));
  const mine = `{
  // my settings
  "compilerOptions": {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "lib": ["ES2023"],
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true,
    "types": [],
  },
}
`;
  writeFileSync(join(dir, 'tsconfig.json'), mine);
  await setUpProjectTypes(dir, shipped);
  const text = readFileSync(join(dir, 'tsconfig.json'), 'utf8');
  assert.match(text, /\/\/ my settings/);
  const opts = (parse(text) as { compilerOptions: Record<string, unknown> }).compilerOptions;
  assert.equal(opts.strict, true);
  assert.deepEqual(opts.types, ['node']);
  assert.deepEqual(opts.typeRoots, NEW_TSCONFIG.compilerOptions.typeRoots);
  assert.deepEqual((opts.paths as Record<string, string[]>).wick, [
    './.wick/types/wick/index.d.ts',
  ]);
  assert.equal(typeCheck(dir), '');
  // A second set-up changes nothing in it.
  const again = await setUpProjectTypes(dir, shipped);
  assert.deepEqual(again.written, ['.wick/types/']);
  assert.equal(readFileSync(join(dir, 'tsconfig.json'), 'utf8'), text);
});

test('its own type roots and paths stay, and come first', () => {
  const out = pointAtWickTypes(
    '{"compilerOptions":{"typeRoots":["./types"],"paths":{"@lib/*":["./lib/*"]}}}',
  );
  const opts = (parse(out) as { compilerOptions: Record<string, unknown> }).compilerOptions;
  assert.deepEqual(opts.typeRoots, ['./types', './.wick/types']);
  assert.deepEqual(Object.keys(opts.paths as object), ['@lib/*', 'wick', 'undici-types']);
});

test('a tsconfig.json that is not JSON is refused, saying what to do, and left as it is', () => {
  assert.throws(
    () => pointAtWickTypes('{"compilerOptions": {'),
    /tsconfig\.json is not valid JSON .*: fix it, then run Wick: Set Up Types again/,
  );
});

test("importsWick: every way a file imports 'wick', and not its look-alikes", () => {
  for (const yes of [
    "import { WickContext } from 'wick';",
    'import * as w from "wick"',
    "export { RDD } from 'wick'",
    "const w = await import('wick')",
    "const w = require('wick')",
    "import 'wick';",
  ])
    assert.ok(importsWick(yes), yes);
  for (const no of ["import x from 'wick-utils'", "import x from './wick'", "// 'wick'"])
    assert.ok(!importsWick(no), no);
});

test('the shipped declarations are those of backend/app as it is now (npm run types)', () => {
  execFileSync(process.execPath, [join(root, 'scripts', 'types.mjs'), '--check'], {
    cwd: root,
    stdio: 'pipe',
  });
});
