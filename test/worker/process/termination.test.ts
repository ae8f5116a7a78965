/**
 * Termination, the end of a runner's child, against real process trees: an exit by itself sweeps
 * what the child left running before it counts as over; a kill ends the whole tree, and a killed
 * child's exit is over only once its slowest descendant is gone; the final state is reported once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setLogSink } from '../../../backend/util/log.js';
import { type Launched, launch } from '../../../backend/worker/process/launch.js';
import { Termination } from '../../../backend/worker/process/termination.js';
import { isAlive, killByToken, readPids } from '../../helpers/processes.js';

setLogSink(() => {});

/** Runs `script` (bash; TOKEN is a token unique to the test) and waits for the pid files named. */
async function start(t: TestContext, script: string, pidFile: string) {
  const dir = mkdtempSync(join(tmpdir(), 'wick-termination-'));
  const token = `wicktest-${randomBytes(6).toString('hex')}`;
  t.after(() => {
    killByToken(token);
    rmSync(dir, { recursive: true, force: true });
  });
  const child: Launched = launch({
    argv: ['bash', '-c', script.replaceAll('TOKEN', token)],
    cwd: dir,
    env: {},
    header: 'termination test',
  });
  const [pid] = await readPids(join(dir, pidFile), 1, t.signal);
  return { child, pid: pid as number };
}

test('an exit by itself: what the child left running is killed before exited() resolves', async (t) => {
  const { child, pid } = await start(
    t,
    '(exec -a TOKEN sleep 300) & echo $! > left; exit 3',
    'left',
  );
  const termination = new Termination('test child', 2000);
  const exit = await child.exited;
  assert.equal(exit.exitCode, 3);
  assert.equal(await termination.exited(child), false, 'not killed');
  assert.equal(isAlive(pid), false, 'the orphan it left is gone');
});

test('a kill: the root ends at SIGTERM, but exited() waits until the whole tree is gone', async (t) => {
  // The grandchild ignores SIGTERM: it lives until SIGKILL, a grace period after the root ended.
  const { child, pid } = await start(
    t,
    'bash -c \'trap "" TERM; echo $$ > stubborn; exec -a TOKEN sleep 300\' & wait',
    'stubborn',
  );
  const termination = new Termination('test child', 300);
  let treeGone = false;
  const killing = termination.kill(child).then(() => {
    treeGone = true;
  });
  assert.equal(termination.killRequested, true);
  const killed = await child.exited.then(() => termination.exited(child));
  assert.equal(killed, true);
  assert.equal(treeGone, true, 'exited() resolved only after the kill had swept the tree');
  assert.equal(isAlive(pid), false, 'the stubborn grandchild is gone');
  await killing;
  // A second kill does not signal again; it waits for the first (already over).
  await termination.kill(child);
});

test('a kill before the child started only records the request', async () => {
  const termination = new Termination('test child', 2000);
  await termination.kill(undefined);
  assert.equal(termination.killRequested, true);
  await termination.treeGone();
});

test('the final state is reported once, and finished resolves even if the report throws', async () => {
  const termination = new Termination('test child', 2000);
  const reports: string[] = [];
  assert.equal(
    termination.finish(() => reports.push('first')),
    true,
  );
  assert.equal(
    termination.finish(() => reports.push('second')),
    false,
  );
  await termination.finished;
  assert.deepEqual(reports, ['first']);
  assert.equal(termination.isFinished, true);

  const throwing = new Termination('test child', 2000);
  assert.throws(
    () =>
      throwing.finish(() => {
        throw new Error('report failed');
      }),
    /report failed/,
  );
  await throwing.finished;
});
