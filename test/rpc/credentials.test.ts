/** Keys derived per submission and application, and how a worker hands one over. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import {
  clusterKeyRing,
  deriveKey,
  formatCredential,
  parseCredential,
  serverPrincipal,
} from '../../backend/rpc/credentials.js';
import { mayPlay } from '../../backend/rpc/refusals.js';

test('a derived key is the documented HMAC, one per kind and id', () => {
  const expected = createHmac('sha256', 'swordfish-swordfish')
    .update('wick-app-key:app-1')
    .digest('hex');
  assert.equal(deriveKey('swordfish-swordfish', 'app', 'app-1'), expected);
  assert.notEqual(deriveKey('swordfish-swordfish', 'app', 'app-2'), expected);
  assert.notEqual(deriveKey('swordfish-swordfish', 'submission', 'app-1'), expected);
});

test('the cluster accepts every principal; a cluster key has no id, a derived one needs one', () => {
  const ring = clusterKeyRing('swordfish-swordfish');
  assert.equal(ring.keyFor('cluster', undefined), 'swordfish-swordfish');
  assert.equal(ring.keyFor('cluster', 'x'), undefined);
  assert.equal(ring.keyFor('app', undefined), undefined);
  assert.equal(ring.keyFor('app', 'app-1'), deriveKey('swordfish-swordfish', 'app', 'app-1'));
});

test('WICK_APP_CREDENTIAL round-trips, and anything else is refused saying what is expected', () => {
  const c = { kind: 'app' as const, id: 'app-20261202-0001', key: 'ab'.repeat(32) };
  assert.deepEqual(parseCredential(formatCredential(c)), c);
  assert.throws(
    () => parseCredential('cluster:x:y'),
    /is not "<submission\|app>:<id>:<64 hex digits>"/,
  );
  assert.throws(() => parseCredential(`app:a:b:${'ab'.repeat(32)}`), /WICK_APP_CREDENTIAL/);
});

test("roles: the secret opens all, a submission only a driver's, an app its executors' (and the master's towards its driver)", () => {
  assert.ok(mayPlay({ kind: 'cluster' }, ['master']));
  assert.ok(mayPlay({ kind: 'open' }, ['worker']));
  assert.ok(mayPlay({ kind: 'submission', id: 's' }, ['driver']));
  assert.ok(!mayPlay({ kind: 'submission', id: 's' }, ['executor']));
  assert.ok(!mayPlay({ kind: 'submission', id: 's' }, ['client']));
  assert.ok(mayPlay({ kind: 'app', id: 'a' }, ['executor', 'worker']));
  assert.ok(!mayPlay({ kind: 'app', id: 'a' }, ['driver']), 'an executor cannot register an app');
  assert.ok(!mayPlay({ kind: 'app', id: 'a' }, ['master'], ['worker']));
  assert.ok(mayPlay({ kind: 'app', id: 'a' }, ['master'], ['worker', 'driver']));
  assert.ok(!mayPlay({ kind: 'app', id: 'a' }, ['worker', 'client']));
  assert.ok(mayPlay({ kind: 'app', id: 'a' }, ['any']));
});

test("who proved our key: a submission's can only be the cluster's, an app's its driver", () => {
  assert.deepEqual(serverPrincipal({ kind: 'submission', id: 's', key: 'k' }), { kind: 'cluster' });
  assert.deepEqual(serverPrincipal({ kind: 'app', id: 'a', key: 'k' }), { kind: 'app', id: 'a' });
  assert.deepEqual(serverPrincipal({ kind: 'cluster', key: 'k' }), { kind: 'cluster' });
});
