/**
 * killProcessTree() against real process trees that try to get away: a grandchild that calls
 * setsid, one orphaned by its parent exiting early, one that ignores SIGTERM, and a double-forked
 * daemon (setsid, then orphaned). After the kill nothing survives: not by the marker scan, not by
 * pgrep on a token in each command line, not by kill(pid, 0) on the pids the processes wrote.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type TestContext, test } from 'node:test';
import { ManualClock } from '../../../backend/util/clock.js';
import { setLogLevel, setLogSink } from '../../../backend/util/log.js';
import { killProcessTree, markedPids } from '../../../backend/worker/process/kill.js';
import { type Launched, launch } from '../../../backend/worker/process/launch.js';
import {
  isAlive,
  killByToken,
  pgrep,
  procStat,
  readPids,
  waitFor,
} from '../../helpers/processes.js';
import { within } from '../../helpers/within.js';

interface Tree {
  launched: Launched;
  dir: string;
  token: string;
  /** pid files written by the processes, by name. */
  pids: Record<string, number>;
}

/**
 * Runs `script` (bash) through launch(), as the worker does; TOKEN in the script is replaced by a
 * token unique to the test, for pgrep; `pidFiles` are waited for before returning.
 */
async function startTree(t: TestContext, script: string, pidFiles: string[]): Promise<Tree> {
  const dir = mkdtempSync(join(tmpdir(), 'wick-kill-'));
  const token = `wicktest-${randomBytes(6).toString('hex')}`;
  t.after(() => {
    killByToken(token);
    rmSync(dir, { recursive: true, force: true });
  });
  const launched = launch({
    argv: ['bash', '-c', script.replaceAll('TOKEN', token)],
    cwd: dir,
    env: {},
    header: 'kill test',
  });
  t.after(() => {
    if (launched.pid > 0) killByToken(token);
  });
  const pids: Record<string, number> = {};
  for (const name of pidFiles) {
    pids[name] = (await readPids(join(dir, name), 1, t.signal))[0] as number;
  }
  return { launched, dir, token, pids };
}

/** Everything the test knows of is gone, by each of the three ways of looking. */
async function assertNoSurvivors(tree: Tree): Promise<void> {
  assert.deepEqual(await markedPids(tree.launched.marker), [], 'marked processes left');
  assert.deepEqual(pgrep(tree.token), [], `processes with ${tree.token} left`);
  for (const [name, pid] of Object.entries(tree.pids)) {
    assert.equal(isAlive(pid), false, `${name} (pid ${pid}) survived`);
  }
  assert.equal(isAlive(tree.launched.pid), false, 'the child survived');
}

const TOP = 'echo $$ > top.pid; exec -a TOKEN-top sleep 300';

test('the marker is inherited: markedPids finds the child and its descendants', async (t) => {
  const tree = await startTree(
    t,
    `bash -c 'echo $$ > gc.pid; exec -a TOKEN-gc sleep 300' & ${TOP}`,
    ['top.pid', 'gc.pid'],
  );
  const marked = await markedPids(tree.launched.marker);
  assert.ok(marked.includes(tree.launched.pid), `${marked} lacks the child`);
  assert.ok(marked.includes(tree.pids['gc.pid'] as number), `${marked} lacks the grandchild`);
  await killProcessTree(tree.launched.pid, tree.launched.marker, 5000);
  assert.equal((await tree.launched.exited).signal, 'SIGTERM');
  await assertNoSurvivors(tree);
});

test('(a) a grandchild that called setsid is killed', async (t) => {
  const tree = await startTree(
    t,
    `setsid bash -c 'echo $$ > gc.pid; exec -a TOKEN-gc sleep 300' & ${TOP}`,
    ['top.pid', 'gc.pid'],
  );
  const gc = procStat(tree.pids['gc.pid'] as number);
  // It really escaped the child's process group: a kill by group alone would miss it.
  assert.ok(gc, 'grandchild not running');
  assert.equal(gc.sid, tree.pids['gc.pid']);
  assert.notEqual(gc.pgid, tree.launched.pid);
  await killProcessTree(tree.launched.pid, tree.launched.marker, 5000);
  await assertNoSurvivors(tree);
});

test('(b) a grandchild orphaned by its parent exiting early is killed', async (t) => {
  const tree = await startTree(
    t,
    `bash -c '(exec -a TOKEN-orphan sleep 300) & echo $! > orphan.pid; echo $$ > parent.pid'; ${TOP}`,
    ['orphan.pid', 'parent.pid', 'top.pid'],
  );
  const orphan = tree.pids['orphan.pid'] as number;
  await readPids(join(tree.dir, 'top.pid'), 1, t.signal);
  // Its parent is gone and it was re-parented away from the tree: tree-kill alone would miss it.
  assert.equal(isAlive(tree.pids['parent.pid'] as number), false);
  assert.notEqual(procStat(orphan)?.ppid, tree.launched.pid);
  assert.ok(isAlive(orphan));
  await killProcessTree(tree.launched.pid, tree.launched.marker, 5000);
  await assertNoSurvivors(tree);
});

test('(b) the orphan is killed even after the child itself has exited', async (t) => {
  const tree = await startTree(
    t,
    `bash -c '(exec -a TOKEN-orphan sleep 300) & echo $! > orphan.pid'; exit 0`,
    ['orphan.pid'],
  );
  assert.equal((await tree.launched.exited).exitCode, 0);
  assert.ok(isAlive(tree.pids['orphan.pid'] as number));
  await killProcessTree(tree.launched.pid, tree.launched.marker, 5000);
  await assertNoSurvivors(tree);
});

test('(c) a tree that ignores SIGTERM gets SIGKILL after the grace period', async (t) => {
  // SIG_IGN survives fork and exec: the child and its grandchild both ignore SIGTERM.
  const tree = await startTree(
    t,
    `trap '' TERM; bash -c 'echo $$ > gc.pid; exec -a TOKEN-gc sleep 300' & ${TOP}`,
    ['top.pid', 'gc.pid'],
  );
  await killProcessTree(tree.launched.pid, tree.launched.marker, 300);
  assert.deepEqual(await tree.launched.exited, { exitCode: undefined, signal: 'SIGKILL' });
  await assertNoSurvivors(tree);
});

test('a child that handles SIGTERM is given the chance to exit by itself', async (t) => {
  const tree = await startTree(
    t,
    `trap 'echo bye > bye.txt; exit 7' TERM; echo $$ > top.pid; while :; do sleep 0.05; done`,
    ['top.pid'],
  );
  await killProcessTree(tree.launched.pid, tree.launched.marker, 10_000);
  assert.equal((await tree.launched.exited).exitCode, 7);
  await readPids(join(tree.dir, 'top.pid'), 1);
  await assertNoSurvivors(tree);
});

test('a process the tree starts after SIGTERM (from its handler) is waited for and killed too', async (t) => {
  // Started after the kill has looked for the tree's members: only a later look finds it.
  // The handler notes that it starts the late process (late.started) before it does.
  const tree = await startTree(
    t,
    `trap 'echo > late.started; setsid bash -c "echo \\$\\$ > late.pid; trap \\"\\" TERM; exec -a TOKEN-late sleep 300" & exit 0' TERM; echo $$ > top.pid; while :; do sleep 0.05; done`,
    ['top.pid'],
  );
  await killProcessTree(tree.launched.pid, tree.launched.marker, 300);
  assert.ok(existsSync(join(tree.dir, 'late.started')), 'the handler started the late process');
  // Its pid, if it got to write it: on a loaded machine the kill can find it and end it first
  // (which is the point). Either way, nothing of the tree survives, by marker and by token.
  const late = await within(10_000, readPids(join(tree.dir, 'late.pid'), 1, t.signal), '').catch(
    () => undefined,
  );
  if (late) tree.pids['late.pid'] = late[0] as number;
  await assertNoSurvivors(tree);
});

test('(d) a double-forked daemon (setsid, then orphaned) is killed', async (t) => {
  const tree = await startTree(
    t,
    `setsid bash -c '(exec -a TOKEN-daemon sleep 300) & echo $! > daemon.pid; echo $$ > mid.pid' & ${TOP}`,
    ['daemon.pid', 'mid.pid', 'top.pid'],
  );
  const daemon = tree.pids['daemon.pid'] as number;
  // Wait until the intermediate process is gone: the daemon is then neither in the child's tree
  // nor in its process group or session — only the marker still finds it.
  await readPids(join(tree.dir, 'mid.pid'), 1, t.signal);
  for (;;) {
    if (!isAlive(tree.pids['mid.pid'] as number)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const st = procStat(daemon);
  assert.ok(st, 'daemon not running');
  assert.notEqual(st.pgid, tree.launched.pid);
  assert.notEqual(st.sid, procStat(tree.launched.pid)?.sid);
  assert.notEqual(st.ppid, tree.launched.pid);
  await killProcessTree(tree.launched.pid, tree.launched.marker, 5000);
  await assertNoSurvivors(tree);
});

test('all of it at once, with the escapees ignoring SIGTERM: zero survivors', async (t) => {
  const tree = await startTree(
    t,
    [
      `trap '' TERM`,
      `setsid bash -c 'echo $$ > a.pid; exec -a TOKEN-a sleep 300' &`,
      `bash -c '(exec -a TOKEN-b sleep 300) & echo $! > b.pid'`,
      `setsid bash -c '(exec -a TOKEN-d sleep 300) & echo $! > d.pid' &`,
      `bash -c 'echo $$ > c.pid; exec -a TOKEN-c sleep 300' &`,
      TOP,
    ].join('\n'),
    ['a.pid', 'b.pid', 'c.pid', 'd.pid', 'top.pid'],
  );
  assert.equal(pgrep(tree.token).length, 5, 'five processes with the token before the kill');
  await killProcessTree(tree.launched.pid, tree.launched.marker, 300);
  await assertNoSurvivors(tree);
});

test('killing no pid (0 or -1) signals nothing', async (t) => {
  // Recorded, not sent: kill(0) would signal this process's own group, kill(-1) everything.
  const kill = t.mock.method(process, 'kill', () => true);
  await killProcessTree(-1, 'nothing', 100);
  await killProcessTree(0, 'nothing', 100);
  assert.deepEqual(
    kill.mock.calls.map((c) => c.arguments),
    [],
  );
});

test('killing a pid that has exited and been reaped returns without waiting out the grace period', async () => {
  const child = spawn('true');
  await once(child, 'exit');
  // The clock never moves: a kill that waited for anything to end would never return.
  const clock = new ManualClock();
  await within(
    10_000,
    killProcessTree(child.pid as number, 'no-such-marker', 3_600_000, false, clock),
    'the kill of a pid that is gone',
  );
});

/**
 * Moves `clock` on by `step` each time the kill sleeps on it, while that keeps it at or before
 * `until`; returns whether the kill has ended, once it has or once it sleeps past what may be moved.
 */
async function drive(
  clock: ManualClock,
  killed: Promise<unknown>,
  step: number,
  until: number,
): Promise<boolean> {
  let ended = false;
  const end = () => {
    ended = true;
  };
  killed.then(end, end);
  for (;;) {
    await waitFor('the kill to end or sleep', () => ended || clock.pendingTimers() > 0);
    if (ended) return true;
    if (clock.now() + step > until) return false;
    clock.advance(step);
  }
}

test('(c) the grace period is on the injected clock, and its wait reads /proc once per round, not on every poll', {
  timeout: 60_000,
}, async (t) => {
  const tree = await startTree(
    t,
    `trap '' TERM; bash -c 'echo $$ > gc.pid; exec -a TOKEN-gc sleep 300' & ${TOP}`,
    ['top.pid', 'gc.pid'],
  );
  const scans: string[] = [];
  const previous = setLogSink((l) => {
    if (/Process tree of \d+: \d+ live members/.test(l)) scans.push(l);
  });
  setLogLevel('DEBUG');
  t.after(() => {
    setLogSink(previous);
    setLogLevel('INFO');
  });
  const clock = new ManualClock();
  const graceMs = 60_000;
  const killed = killProcessTree(tree.launched.pid, tree.launched.marker, graceMs, false, clock);
  // A hundred polls through the grace period, the last 1 ms before its end: the tree ignores
  // SIGTERM, so the kill is still waiting, having read /proc only for the SIGTERM round.
  assert.equal(await drive(clock, killed, graceMs / 100, graceMs - 1), false);
  clock.advance(graceMs - 1 - clock.now());
  assert.equal(await drive(clock, killed, 1, graceMs - 1), false);
  assert.ok(isAlive(tree.launched.pid), 'the child is alive');
  assert.ok(isAlive(tree.pids['gc.pid'] as number), 'the grandchild is alive');
  assert.equal(scans.length, 1, scans.join('\n'));
  // 1 ms more: SIGKILL, and the kill ends while the clock stays well short of its 5 s bound.
  assert.equal(await drive(clock, killed, 1, graceMs + 1000), true);
  await killed;
  assert.deepEqual(await tree.launched.exited, { exitCode: undefined, signal: 'SIGKILL' });
  // Then the SIGKILL round's, and the one that found nobody left.
  assert.equal(scans.length, 3, scans.join('\n'));
  await assertNoSurvivors(tree);
});

test('a group left with only zombies counts as gone (init may reap them late, or never)', async (t) => {
  // A parent outside the group that never reaps: its child leads a group of its own and exits, so
  // the group holds one zombie for as long as the parent lives. kill(-pgid, 0) still succeeds.
  const parent = spawn(
    'perl',
    ['-e', '$| = 1; my $p = fork; if ($p == 0) { setpgrp(0, 0); exit 0 } print "$p\\n"; sleep 300'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => parent.kill('SIGKILL'));
  const [line] = (await once(createInterface({ input: parent.stdout }), 'line')) as [string];
  const zombie = Number(line);
  await waitFor('the zombie', () => procStat(zombie)?.state === 'Z', t.signal);
  process.kill(-zombie, 0);

  const lines: string[] = [];
  const previous = setLogSink((l) => lines.push(l));
  try {
    await killProcessTree(zombie, 'no-such-marker', 200);
  } finally {
    setLogSink(previous);
  }
  assert.deepEqual(lines, [], 'no SIGKILL round and no survivors reported');
});
