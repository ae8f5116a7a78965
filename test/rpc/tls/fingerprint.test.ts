/** Fingerprints as Wick prints and reads them, and which addresses count as loopback. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFingerprint, parseFingerprints } from '../../../backend/rpc/tls/fingerprint.js';
import { isLoopbackHost } from '../../../backend/rpc/tls/loopback.js';

const HEX = '0123456789abcdef'.repeat(4);

test('kubeadm’s form and the browser’s colon form read as one fingerprint; anything else is refused', () => {
  assert.equal(parseFingerprint(`sha256:${HEX}`, 'x'), `sha256:${HEX}`);
  assert.equal(
    parseFingerprint(`SHA256:${HEX.toUpperCase()}`.replace('SHA256', 'sha256'), 'x'),
    `sha256:${HEX}`,
  );
  const colons = (HEX.match(/../g) as string[]).join(':').toUpperCase();
  assert.equal(parseFingerprint(colons, 'x'), `sha256:${HEX}`);
  assert.deepEqual(parseFingerprints(` sha256:${HEX} ,${colons},`, 'x'), [
    `sha256:${HEX}`,
    `sha256:${HEX}`,
  ]);
  assert.deepEqual(parseFingerprints('', 'x'), []);
  for (const bad of ['sha256:abc', `sha1:${HEX}`, HEX, `sha256:${HEX}0`]) {
    assert.throws(
      () => parseFingerprint(bad, 'wick.ssl.fingerprint'),
      (e: Error) =>
        e.message.includes('wick.ssl.fingerprint') && e.message.includes('sha256:<64 hex digits>'),
      bad,
    );
  }
});

test('loopback: 127/8, ::1, mapped, localhost; nothing else', () => {
  for (const h of [
    '127.0.0.1',
    '127.1.2.3',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    'localhost',
    'LOCALHOST',
  ])
    assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['0.0.0.0', '10.0.0.1', '192.0.2.2', 'fd00::2', 'vm', '128.0.0.1', '::'])
    assert.equal(isLoopbackHost(h), false, h);
});
