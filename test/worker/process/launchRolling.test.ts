/**
 * launch() with rolled logs: a real child's output goes through the worker's appenders, stderr
 * after the header; its exit is reported only once every byte it wrote is in the files; a
 * relaunch (a supervised driver's) appends to the same log and rolls on; a missing program is
 * still a rejected `exited` that names it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sortRolledOver } from '../../../backend/logs/rolledFiles.js';
import type { RollingConf } from '../../../backend/worker/logs/RollingFileAppender.js';
import { launch } from '../../../backend/worker/process/launch.js';

const SIZE = 81_920;
const ROLLING: RollingConf = {
  strategy: { kind: 'size', maxBytes: SIZE },
  maxRetainedFiles: -1,
  compress: false,
};

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-launch-rolling-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A log's files end to end, rolled ones first. */
function whole(dir: string, stream: 'stdout' | 'stderr'): string {
  const files = [...sortRolledOver(readdirSync(dir), stream), stream];
  return files.map((f) => readFileSync(join(dir, f), 'utf8')).join('');
}

/** Writes `n` numbered lines of 20 bytes to stdout as fast as it can, then one to stderr, and exits. */
const writer = (tag: string, n: number) =>
  `let s='';for(let i=0;i<${n};i++)s+='${tag}'+String(i).padStart(18,'0')+'\\n';process.stdout.write(s);process.stderr.write('${tag} done\\n');`;

const lines = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(18, '0')}\n`).join('');

test('every byte is in the files when the exit is reported; the log rolls, stderr has its header', async (t) => {
  const dir = tempDir(t);
  const launched = launch({
    argv: [process.execPath, '-e', writer('a', 20_000)],
    cwd: dir,
    env: {},
    header: 'Launch Command: "node"',
    rolling: ROLLING,
  });
  assert.ok(launched.pid > 0);
  assert.deepEqual(await launched.exited, { exitCode: 0, signal: undefined });
  // Read at once, as a follower told "process exited" does.
  assert.equal(whole(dir, 'stdout'), lines('a', 20_000));
  assert.equal(sortRolledOver(readdirSync(dir), 'stdout').length, Math.floor((20_000 * 20) / SIZE));
  assert.equal(whole(dir, 'stderr'), `Launch Command: "node"\n${'='.repeat(40)}\n\na done\n`);
});

test('a relaunch appends to the same rolled log', async (t) => {
  const dir = tempDir(t);
  for (const tag of ['a', 'b']) {
    const launched = launch({
      argv: [process.execPath, '-e', writer(tag, 6_000)],
      cwd: dir,
      env: {},
      header: `run ${tag}`,
      append: true,
      rolling: ROLLING,
    });
    await launched.exited;
  }
  assert.equal(whole(dir, 'stdout'), lines('a', 6_000) + lines('b', 6_000));
  assert.equal(sortRolledOver(readdirSync(dir), 'stdout').length, Math.floor((12_000 * 20) / SIZE));
  const err = whole(dir, 'stderr');
  assert.match(err, /^run a\n=+\n\na done\nrun b\n=+\n\nb done\n$/);
});

test('a program that does not exist: exited rejects, naming it', async (t) => {
  const dir = tempDir(t);
  const launched = launch({
    argv: [join(dir, 'no-such-program')],
    cwd: dir,
    env: {},
    header: 'x',
    rolling: ROLLING,
  });
  await assert.rejects(launched.exited, /Failed to start .*no-such-program/);
});

// A kill signals inside a sandbox (kill.ts), and learns it is one from what launch returned: a
// rolled launch once left it out, so its executors lost their SIGTERM and grace period.
test('a sandboxed launch says so, with rolled logs as without', async (t) => {
  for (const rolling of [ROLLING, undefined]) {
    const dir = tempDir(t);
    const launched = launch({
      argv: [process.execPath, '-e', ''],
      cwd: dir,
      env: {},
      header: 'x',
      sandboxed: true,
      ...(rolling ? { rolling } : {}),
    });
    assert.equal(launched.sandboxed, true, rolling ? 'rolled' : 'plain');
    await launched.exited;
  }
});
