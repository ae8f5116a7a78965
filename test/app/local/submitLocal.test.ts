/** `wick submit --master local[N]`: the application and its tasks in the submit's process alone. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { markedProcesses, runWick, startWick } from '../../helpers/cli.js';

const pi = join(import.meta.dirname, '..', '..', '..', 'examples', 'pi.ts');

test('SparkPi with --master local[2]: no cluster, the right answer, nothing left behind', {
  timeout: 90_000,
}, async () => {
  const mark = randomUUID();
  const p = startWick(['submit', '--master', 'local[2]', pi, '10'], { mark });
  p.child.stdin?.end();
  const { code } = await p.exited;
  assert.equal(code, 0, p.stderr());
  const est = Number(/Pi is roughly ([\d.]+)/.exec(p.stdout())?.[1]);
  assert.ok(Math.abs(est - Math.PI) < 0.01, p.stdout());
  assert.match(p.stderr(), /tasks run inside this process/);
  assert.doesNotMatch(p.stderr(), /embedded local cluster/);
  const appId = /(local-\d+)/.exec(p.stderr())?.[1];
  assert.ok(appId, p.stderr());
  assert.deepEqual(markedProcesses(mark), [], 'no process started');
  assert.deepEqual(
    readdirSync(tmpdir()).filter((d) => d.startsWith(`wick-${appId}-`)),
    [],
    "the executors' folder is removed",
  );
  assert.equal(existsSync(join(tmpdir(), `wick-local-${p.pid}`)), false);
});

test('local[N] refuses cluster mode and a bad N, naming what it got', {
  timeout: 60_000,
}, async () => {
  const cluster = await runWick(['submit', '--master', 'local[2]', '--deploy-mode', 'cluster', pi]);
  assert.equal(cluster.code, 1);
  assert.match(cluster.stderr, /local\[2\] runs the application inside this process.*"cluster"/);
  const bad = await runWick(['submit', '--master', 'local[0]', pi]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Invalid master "local\[0\]": expected local\[N\]/);
});
