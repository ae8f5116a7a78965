/**
 * The confined executors' code cache (compileCacheWarmup.ts) with real bwrap and the built CLI:
 * the worker fills it by a confined run of Wick's own code; a confined process finds it where
 * WICK_COMPILE_CACHE says, V8 accepts it for the bundle, and nothing confined can write there —
 * an executor that runs leaves it as it was, and a process that tries gets EROFS.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, type TestContext, test } from 'node:test';
import { TASK_THREAD_V8_FLAGS } from '../../../backend/app/executor/taskThreadFlags.js';
import { cliBundleOf } from '../../../backend/cli/commandNames.js';
import { wrapBundle } from '../../../backend/util/compileCache.js';
import { distFile } from '../../../backend/util/paths.js';
import { warmSandboxCompileCache } from '../../../backend/worker/sandbox/compileCacheWarmup.js';
import type { Sandbox } from '../../../backend/worker/sandbox/Sandbox.js';
import { assertBuilt } from '../../helpers/cli.js';
import { bwrapSandbox } from '../../helpers/sandbox.js';
import { CLI } from '../../helpers/standby.js';

before(assertBuilt);

function confinedWorker(t: TestContext): { sandbox: Sandbox; workDir: string; cache: string } {
  const { sandbox, workDir } = bwrapSandbox(t, 'cache-warmup', {
    compileCache: (dir) => join(dir, '.compile-cache'),
  });
  return { sandbox, workDir, cache: join(workDir, '.compile-cache') };
}

function warm(sandbox: Sandbox): Promise<boolean> {
  return new Promise((resolve) => {
    warmSandboxCompileCache(sandbox, [process.execPath, CLI], 2000, resolve);
  });
}

/** Runs `argv` confined in a fresh dir of the work dir: its exit code, stdout and stderr. */
function runConfined(sandbox: Sandbox, workDir: string, argv: string[], input?: string) {
  const own = mkdtempSync(join(workDir, 'app-'));
  const wrapped = sandbox.wrap(argv, { cwd: own, readWrite: [] });
  const r = spawnSync(wrapped[0] as string, wrapped.slice(1), {
    encoding: 'utf8',
    input: input ?? '',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const snapshot = (dir: string) =>
  readdirSync(dir)
    .sort()
    .map((f) => `${f} ${statSync(join(dir, f)).mtimeMs} ${statSync(join(dir, f)).size}`);

test('filled by the worker, shown read-only, accepted by V8 for the bundle', {
  timeout: 120_000,
}, async (t) => {
  const { sandbox, workDir, cache } = confinedWorker(t);
  assert.equal(sandbox.compileCache, cache);
  // What was there before (a worker that ran applications open, here, could write it) goes.
  mkdirSync(cache, { recursive: true });
  writeFileSync(join(cache, 'executor-planted.v8cache'), 'not code');
  assert.equal(await warm(sandbox), true);
  const files = readdirSync(cache);
  assert.ok(!files.includes('executor-planted.v8cache'), files.join(' '));
  const standby = files.filter((f) => f.startsWith('executor-standby-'));
  const executor = files.filter((f) => /^executor-\d/.test(f));
  assert.equal(standby.length, 1, files.join(' '));
  assert.deepEqual(
    executor,
    standby.map((f) => f.replace('executor-standby-', 'executor-')),
  );
  const before = snapshot(cache);

  // Confined: the cache is where WICK_COMPILE_CACHE says, readable, V8 takes it for the bundle
  // (the executors' flags set first, as dist/wick.cjs does), and it cannot be written.
  const bundle = distFile(`cli/${cliBundleOf('executor')}`);
  const [head, tail] = wrapBundle('\0').split('\0');
  const probe = `
    const fs = require('node:fs'), vm = require('node:vm'), v8 = require('node:v8');
    for (const f of ${JSON.stringify(TASK_THREAD_V8_FLAGS)}) v8.setFlagsFromString(f);
    const dir = process.env.WICK_COMPILE_CACHE;
    const file = fs.readdirSync(dir).find((f) => /^executor-\\d/.test(f));
    const bytes = fs.readFileSync(${JSON.stringify(bundle)});
    const source = bytes.toString(require('node:buffer').isAscii(bytes) ? 'latin1' : 'utf8');
    const s = new vm.Script(${JSON.stringify(head)} + source + ${JSON.stringify(tail)}, {
      filename: ${JSON.stringify(bundle)},
      cachedData: fs.readFileSync(dir + '/' + file),
    });
    const tries = {};
    for (const [what, act] of [
      ['write', () => fs.writeFileSync(dir + '/x.v8cache', 'x')],
      ['overwrite', () => fs.writeFileSync(dir + '/' + file, 'x')],
      ['remove', () => fs.unlinkSync(dir + '/' + file)],
    ]) {
      try { act(); tries[what] = 'done'; } catch (e) { tries[what] = e.code; }
    }
    console.log(JSON.stringify({ dir, rejected: s.cachedDataRejected, tries }));`;
  const r = runConfined(sandbox, workDir, [process.execPath, '-e', probe]);
  assert.equal(r.code, 0, r.err);
  const seen = JSON.parse(r.out) as {
    dir: string;
    rejected: boolean;
    tries: Record<string, string>;
  };
  assert.equal(seen.dir, '/run/wick/compile-cache');
  assert.equal(seen.rejected, false, 'V8 accepts the cache for the bundle');
  assert.deepEqual(seen.tries, { write: 'EROFS', overwrite: 'EROFS', remove: 'EROFS' });

  // A confined Wick executor command runs with it and leaves it as it was.
  const standbyRun = runConfined(sandbox, workDir, [process.execPath, CLI, 'executor-standby']);
  assert.equal(standbyRun.code, 0, standbyRun.err);
  assert.deepEqual(snapshot(cache), before);
});

test('no folder, no cache: nothing is bound, nothing runs', async (t) => {
  const { sandbox } = bwrapSandbox(t, 'no-cache');
  assert.equal(sandbox.compileCache, undefined);
  assert.ok(!sandbox.wrap(['x'], { cwd: '/w', readWrite: [] }).includes('--setenv'));
  assert.equal(await warm(sandbox), false);
});
