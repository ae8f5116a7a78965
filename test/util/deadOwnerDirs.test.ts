/**
 * Temporary folders left by processes that died without removing them: removed, while those of
 * live processes, and other names, stay.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { removeDeadOwnerDirs } from '../../backend/util/deadOwnerDirs.js';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'wick-dead-owner-test-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(r.stdout);
}

test('folders of dead processes go; those of live ones, this process’s and other names stay', async () => {
  const dead = deadPid();
  const names = {
    dead: `wick-vscode-${dead}-abc123`,
    deadBare: `wick-vscode-${dead}`,
    alive: `wick-vscode-${process.ppid}-def456`,
    mine: `wick-vscode-${process.pid}-0a0b0c`,
    other: `wick-vscodex-${dead}-abc123`,
    noPid: 'wick-vscode-notapid-1',
  };
  for (const n of Object.values(names)) await mkdir(join(root, n, 'work'), { recursive: true });
  const removed = await removeDeadOwnerDirs('wick-vscode', root);
  assert.deepEqual(removed.sort(), [join(root, names.deadBare), join(root, names.dead)].sort());
  assert.equal(existsSync(join(root, names.dead)), false);
  for (const n of [names.alive, names.mine, names.other, names.noPid])
    assert.equal(existsSync(join(root, n)), true, n);
});

test('a folder of a zombie (exited, not reaped yet) goes too', async (t) => {
  // sh starts a child that exits at once, then becomes `sleep`, which never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => parent.kill('SIGKILL'));
  const [chunk] = (await once(parent.stdout, 'data')) as [Buffer];
  const zombie = Number(chunk.toString().trim());
  assert.ok(zombie > 0, `pid ${chunk}`);
  const deadline = Date.now() + 10_000;
  while (!/^\d+ \(.*\) Z/.test(readProcStat(zombie))) {
    assert.ok(Date.now() < deadline, `pid ${zombie} never became a zombie`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const name = `wick-vscode-${zombie}-abc123`;
  await mkdir(join(root, name));
  assert.deepEqual(await removeDeadOwnerDirs('wick-vscode', root), [join(root, name)]);
});

function readProcStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}

test('a folder that cannot be listed removes nothing and does not throw', async () => {
  assert.deepEqual(await removeDeadOwnerDirs('wick-vscode', join(root, 'missing')), []);
});
