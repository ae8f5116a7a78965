/**
 * launch(): a real child writes its own stdout and stderr files, stderr after the header; it leads
 * its own process group and carries the marker its descendants inherit; a missing program is a
 * rejected `exited` that names it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { launch, MARKER_VAR } from '../../../backend/worker/process/launch.js';
import { procStat } from '../../helpers/processes.js';

const RULE = '='.repeat(40);

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-launch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a node -e child writes stdout and stderr to files, stderr after the header and a rule', async (t) => {
  const dir = tempDir(t);
  const script = [
    "process.stdout.write('out line 1\\n');",
    "process.stderr.write('err line 1\\n');",
    "process.stdout.write('out line 2\\n');",
    `process.stdout.write(process.env.EXTRA + ' ' + process.env.${MARKER_VAR} + '\\n');`,
    'process.exitCode = 3;',
  ].join('');
  const launched = launch({
    argv: [process.execPath, '-e', script],
    cwd: dir,
    env: { EXTRA: 'extra-value' },
    header: 'Wick Executor Command: "node" "-e" "…"',
  });
  assert.ok(launched.pid > 0);
  // The child leads a process group of its own, so a kill by group reaches what it starts.
  const st = procStat(launched.pid);
  if (st) assert.equal(st.pgid, launched.pid);
  const exit = await launched.exited;
  assert.deepEqual(exit, { exitCode: 3, signal: undefined });

  const out = readFileSync(join(dir, 'stdout'), 'utf8');
  assert.equal(out, `out line 1\nout line 2\nextra-value ${launched.marker}\n`);
  const err = readFileSync(join(dir, 'stderr'), 'utf8');
  const lines = err.split('\n');
  assert.equal(lines[0], 'Wick Executor Command: "node" "-e" "…"');
  assert.equal(lines[1], RULE);
  assert.equal(lines[2], '');
  assert.equal(lines.slice(3).join('\n'), 'err line 1\n');
});

test('append keeps what earlier runs wrote; each run adds its header', async (t) => {
  const dir = tempDir(t);
  for (const n of [1, 2]) {
    const l = launch({
      argv: [process.execPath, '-e', `console.log('run ${n}'); console.error('e${n}')`],
      cwd: dir,
      env: {},
      header: `Launch Command: run ${n}`,
      append: true,
    });
    assert.equal((await l.exited).exitCode, 0);
  }
  assert.equal(readFileSync(join(dir, 'stdout'), 'utf8'), 'run 1\nrun 2\n');
  assert.equal(
    readFileSync(join(dir, 'stderr'), 'utf8'),
    `Launch Command: run 1\n${RULE}\n\ne1\nLaunch Command: run 2\n${RULE}\n\ne2\n`,
  );
});

test('without append, a second launch truncates the files', async (t) => {
  const dir = tempDir(t);
  for (const word of ['a-much-longer-first-line', 'b']) {
    const l = launch({
      argv: [process.execPath, '-e', `console.log('${word}')`],
      cwd: dir,
      env: {},
      header: 'H',
    });
    await l.exited;
  }
  assert.equal(readFileSync(join(dir, 'stdout'), 'utf8'), 'b\n');
  assert.equal(readFileSync(join(dir, 'stderr'), 'utf8'), `H\n${RULE}\n\n`);
});

test('a child ended by a signal reports the signal and no exit code', async (t) => {
  const dir = tempDir(t);
  const l = launch({
    argv: ['bash', '-c', 'kill -TERM $$'],
    cwd: dir,
    env: {},
    header: 'H',
  });
  assert.deepEqual(await l.exited, { exitCode: undefined, signal: 'SIGTERM' });
});

test('a missing program: no pid, and exited rejects with a message naming the program', async (t) => {
  const dir = tempDir(t);
  const program = join(dir, 'no-such-program');
  const l = launch({ argv: [program, '--flag'], cwd: dir, env: {}, header: 'H' });
  assert.ok(l.pid <= 0, `pid ${l.pid}`);
  await assert.rejects(l.exited, (err: Error) => {
    assert.ok(err.message.includes(program), err.message);
    assert.match(err.message, /^Failed to start /);
    assert.match(err.message, /ENOENT/);
    return true;
  });
  // The header is still written, so the stderr file says what was tried.
  assert.match(readFileSync(join(dir, 'stderr'), 'utf8'), /^H\n=+\n/);
});

test('a program that is not executable is a spawn failure too', async (t) => {
  const dir = tempDir(t);
  const l = launch({ argv: [dir, 'x'], cwd: dir, env: {}, header: 'H' });
  await assert.rejects(l.exited, (err: Error) => err.message.includes(dir));
});
