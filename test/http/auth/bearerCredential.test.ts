/** The HTTP credential check (pure): the secret, a valid token, and each refusal with its why. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkBearer } from '../../../backend/http/auth/bearerCredential.js';
import { TokenStore } from '../../../backend/master/tokens/TokenStore.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-bearer-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const SECRET = 'a-cluster-secret-of-24-chars';

test('the secret, a token, and what is refused', () => {
  const tokens = new TokenStore(join(dir, 'tokens.json'), SECRET);
  const { token, record } = tokens.create('alice', 1000, 10_000, false);
  const keys = { secret: SECRET, tokens, now: () => 2000 };
  assert.deepEqual(checkBearer(`Bearer ${SECRET}`, keys), { kind: 'cluster' });
  assert.deepEqual(checkBearer(`Bearer ${token}`, keys), { kind: 'token', token: record });
  const forged = token.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  assert.match(
    (checkBearer(`Bearer ${forged}`, keys) as { why: string }).why,
    /the key sent for token tok-[0-9a-f]{16} is not its key/,
  );
  assert.match(
    (checkBearer(`Bearer ${token}`, { ...keys, now: () => 20_000 }) as { why: string }).why,
    /expired at/,
  );
  assert.match((checkBearer(undefined, keys) as { why: string }).why, /No "Authorization/);
  assert.match(
    (checkBearer('Bearer nope', keys) as { why: string }).why,
    /neither the cluster secret nor a token/,
  );
  tokens.revoke('alice');
  assert.match(
    (checkBearer(`Bearer ${token}`, keys) as { why: string }).why,
    /revoked, or never made here/,
  );
  // Made under another secret: the stored hash does not match what that secret derives.
  const other = new TokenStore(join(dir, 'tokens2.json'), SECRET);
  const made = other.create('bob', 1000, undefined, true);
  const moved = new TokenStore(join(dir, 'tokens2.json'), 'another-secret-of-24-chars!');
  assert.match(
    (
      checkBearer(`Bearer ${made.token}`, {
        secret: 'another-secret-of-24-chars!',
        tokens: moved,
      }) as { why: string }
    ).why,
    /made under another cluster secret/,
  );
});
