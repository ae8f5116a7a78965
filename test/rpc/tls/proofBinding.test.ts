/**
 * The handshake's proofs over TLS (docs/protocol.md, "Encryption"): the test vector the docs give
 * a peer of another language, computed by Wick's own code, and plain proofs unchanged.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { clientProof, serverProof } from '../../../backend/rpc/auth.js';

const NONCE = '00112233445566778899aabbccddeeff';
const CHALLENGE = 'ffeeddccbbaa99887766554433221100';
const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');

test('the documented proofs over TLS are what Wick computes', () => {
  const m =
    /over TLS, with the server's certificate\s+`(sha256:[0-9a-f]{64})`: server proof\s+`([0-9a-f]{64})`, client proof\s+`([0-9a-f]{64})`/.exec(
      doc,
    );
  assert.ok(m, 'docs/protocol.md gives the TLS test vector');
  const [, binding, server, client] = m as unknown as [string, string, string, string];
  assert.equal(serverProof('swordfish', NONCE, CHALLENGE, binding), server);
  assert.equal(clientProof('swordfish', NONCE, CHALLENGE, binding), client);
  // Without a binding, the plain proofs the same section documents.
  assert.ok(doc.includes(serverProof('swordfish', NONCE, CHALLENGE)));
  assert.ok(doc.includes(clientProof('swordfish', NONCE, CHALLENGE)));
  assert.notEqual(
    serverProof('swordfish', NONCE, CHALLENGE, binding),
    serverProof('swordfish', NONCE, CHALLENGE),
  );
});
