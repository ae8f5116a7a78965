/**
 * The production build (what `npm run package` puts in the .vsix) keeps the names of the code a
 * user's stacks and debugger show: the CLI (a client-mode driver), the library and the task
 * threads. Minified, V8 named a method's class by its minified name: a killed app's output ended
 * in `B4.abort`, `$B.handle` (issue 29). Built here as packaging builds it, into a folder of its own.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { parseStackFrames, type StackFrame } from '../../backend/shared/stackFrames.js';
import { repoRoot } from '../helpers/cli.js';

let dir: string;
let dist: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wick-production-build-'));
  dist = join(dir, 'dist');
  // The packaged extension has piscina and esbuild beside dist/ (scripts/package.mjs).
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  const built = await run(
    [
      join(repoRoot, 'scripts', 'build.mjs'),
      '--production',
      '--outdir',
      dist,
      '--only',
      'main,wick,wick-lib,task-worker',
    ],
    { cwd: repoRoot },
  );
  assert.equal(built.code, 0, built.stderr);
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('a job that fails prints, under WICK_DEBUG, the frames of Wick it went through by their names', {
  timeout: 120_000,
}, async () => {
  const app = join(dir, 'fails.ts');
  writeFileSync(
    app,
    [
      "import { WickContext } from 'wick';",
      "const wc = await WickContext.create({ appName: 'Fails' });",
      'try {',
      '  await wc.range(0, 4, 1, 2).map((x: number) => {',
      "    if (x === 3) throw new Error('no threes: ' + x);",
      '    return x;',
      '  }).collect();',
      '} finally {',
      '  await wc.stop();',
      '}',
      '',
    ].join('\n'),
  );
  const r = await run([join(dist, 'wick.cjs'), 'submit', '--master', 'local[1]', app], {
    cwd: dir,
    env: { WICK_DEBUG: '1' },
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /no threes: 3/);
  const frames = wickFrames(r.stderr);
  const names = frames.map((f) => f.name ?? '');
  // The driver's scheduler (dist/cli/main.cjs) and the task thread (dist/task-worker.cjs).
  assert.ok(names.includes('TaskScheduler.abort'), `the driver's frames: ${names}`);
  assert.ok(names.includes('runTask'), `the task thread's frames: ${names}`);
  assertNoneMinified(frames);
});

test("the library's frames name its classes and functions", { timeout: 60_000 }, async () => {
  const lib = createRequire(import.meta.url)(join(dist, 'wick-lib.cjs')) as {
    WickContext: {
      create(
        o: object,
      ): Promise<{ parallelize(a: number[]): { map(f: unknown): unknown }; stop(): Promise<void> }>;
    };
  };
  const wc = await lib.WickContext.create({ master: 'local[1]', appName: 'Names' });
  let err: Error | undefined;
  try {
    wc.parallelize([1, 2]).map(42);
  } catch (e) {
    err = e as Error;
  } finally {
    await wc.stop();
  }
  assert.match(String(err?.message), /map expects a function, got number/);
  const frames = wickFrames(err?.stack ?? '');
  const names = frames.map((f) => f.name ?? '');
  // A method's frame is named by its instance's class: esbuild calls a class that names itself
  // inside its body `_RDD` (its inner binding), minified it was one letter (`e.map`).
  assert.ok(
    names.some((n) => /^_?RDD\.map$/.test(n)),
    `the library's frames: ${names}`,
  );
  assertNoneMinified(frames);
});

/** The frames of `text` in the production build's files. */
function wickFrames(text: string): StackFrame[] {
  const frames = parseStackFrames(text).filter((f) => f.file.startsWith(`${dist}${sep}`));
  assert.ok(frames.length > 0, `no frame of ${dist} in:\n${text}`);
  return frames;
}

/**
 * A minified name is one or two characters (esbuild's, in a bundle of this size): in a frame it is
 * the function's, or the class before a method (`B4.abort`). Property names are never minified.
 */
function assertNoneMinified(frames: StackFrame[]): void {
  const minified = frames.filter((f) => {
    const head = (f.name ?? '').replace(/^(async|new) /, '').split('.')[0] as string;
    return /^[A-Za-z_$][\w$]?$/.test(head);
  });
  assert.deepEqual(
    minified.map((f) => `${f.name} (${f.file}:${f.line})`),
    [],
    'no frame of the build has a minified name',
  );
}

function run(
  args: string[],
  o: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stderr: string }> {
  // The test's own WICK_* settings (a master, a log level) would change what runs.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('WICK_')),
  );
  const child = spawn(process.execPath, args, {
    cwd: o.cwd,
    env: { ...env, ...o.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}
