/** `wick status` and `wick logs` when there is nothing to talk to, or the id is not one. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, test } from 'node:test';
import { assertBuilt, markedProcesses, runWick } from '../helpers/cli.js';
import { unusedPort } from '../helpers/net.js';

before(assertBuilt);

test('wick status against an unreachable master exits non-zero, listing every URL tried', async () => {
  const [p1, p2] = [await unusedPort(), await unusedPort()];
  const mark = randomUUID();
  for (const args of [
    ['status', '--master', `wick://127.0.0.1:${p1}`],
    ['status', '--json', '--master', `wick://127.0.0.1:${p1},127.0.0.1:${p2}`],
  ]) {
    const r = await runWick(args, { mark });
    assert.notEqual(r.code, 0, r.stdout);
    assert.equal(r.stdout, '', 'prints no state');
    assert.match(r.stderr, /Cannot reach a master/);
    assert.ok(r.stderr.includes(`wick://127.0.0.1:${p1}`), r.stderr);
    if (args.includes('--json')) assert.ok(r.stderr.includes(`wick://127.0.0.1:${p2}`), r.stderr);
    assert.match(r.stderr, /wick master|wick local-cluster/, 'says how to start one');
  }
  // The default master comes from $WICK_MASTER.
  const r = await runWick(['status'], { mark, env: { WICK_MASTER: `wick://127.0.0.1:${p2}` } });
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.includes(`wick://127.0.0.1:${p2}`), r.stderr);
  assert.deepEqual(markedProcesses(mark), []);
});

test('wick status with a malformed master URL says what a master URL looks like', async () => {
  const r = await runWick(['status', '--master', 'localhost']);
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.includes('"localhost"'), r.stderr);
  assert.match(r.stderr, /expected wick:\/\/host:port/);
});

test('wick logs with a bad id explains the expected format, before contacting any master', async () => {
  const port = await unusedPort();
  for (const id of [
    'bad!id',
    'app-1/x',
    'app-1/',
    '/3',
    'app 1/2',
    'driver-',
    '../../etc/passwd',
  ]) {
    const r = await runWick(['logs', '--master', `wick://127.0.0.1:${port}`, id]);
    assert.notEqual(r.code, 0, id);
    assert.ok(r.stderr.includes(`Invalid log id "${id}"`), r.stderr);
    assert.match(
      r.stderr,
      /expected app-id\/exec-id \(e\.g\. app-\d{14}-\d{4}\/0\), a driver id, or an app id/,
    );
    assert.doesNotMatch(r.stderr, /Cannot reach a master/, 'validated before connecting');
  }
});

test('wick logs with a good id and no master says which master it tried', async () => {
  const port = await unusedPort();
  for (const id of ['app-20261130120000-0000/0', 'driver-20261130120000-0001']) {
    const r = await runWick(['logs', '--master', `wick://127.0.0.1:${port}`, id]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Cannot reach a master/);
    assert.ok(r.stderr.includes(`wick://127.0.0.1:${port}`), r.stderr);
  }
});
