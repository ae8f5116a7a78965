/**
 * `wick decommission`: what it sends for what the operator named (worker ids apart from hosts),
 * bad names refused before anything is sent, and, against a real master, a name that matches no
 * worker refused with the master's words and no stack trace.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decommissionRequest } from '../../../backend/cli/commands/decommission.js';
import { runWick } from '../../helpers/cli.js';
import { startMaster } from '../../helpers/cluster.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';

checkNothingLeftRunning();

test('worker ids and hosts are told apart; bad names are refused naming the value', () => {
  assert.deepEqual(
    decommissionRequest(['worker-20261207000000-10.0.0.1-7078', 'host-a', '10.0.0.2']),
    { hostnames: ['host-a', '10.0.0.2'], workerIds: ['worker-20261207000000-10.0.0.1-7078'] },
  );
  assert.throws(
    () => decommissionRequest(['a b']),
    /Cannot decommission "a b": expected a worker id/,
  );
  assert.throws(() => decommissionRequest(['x/y']), /"x\/y"/);
  assert.throws(() => decommissionRequest(['h'.repeat(254)]), /at most 253 characters/);
  assert.throws(
    () => decommissionRequest(Array.from({ length: 1001 }, (_, i) => `h${i}`)),
    /1001 workers or hosts at once: at most 1000/,
  );
});

test('against a master: a name that matches no worker is refused, exit 1, no stack trace', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const r = await runWick(['decommission', 'worker-nope', '10.9.9.9', '--master', master.url]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /no registered worker at "10\.9\.9\.9", "worker-nope" \(expected a host or a worker id that `wick status` lists\)/,
  );
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.equal(r.stdout, '');
});
