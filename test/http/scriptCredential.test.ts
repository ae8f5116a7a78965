/** The one check of a script's `Authorization` header that every web door asks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearerToken, checkScriptCredential } from '../../backend/http/scriptCredential.js';

const SECRET = 'a cluster secret with spaces';

test('the cluster secret as a Bearer token is taken, trimmed, any case of "Bearer"', () => {
  assert.deepEqual(checkScriptCredential(`Bearer ${SECRET}`, SECRET), {
    ok: true,
    principal: 'cluster',
  });
  assert.deepEqual(checkScriptCredential(`bearer   ${SECRET} `, SECRET), {
    ok: true,
    principal: 'cluster',
  });
  assert.equal(bearerToken(`Bearer ${SECRET}`), SECRET);
});

test('anything else is refused, with a reason that does not repeat what was sent', () => {
  for (const header of [
    undefined,
    '',
    'Bearer',
    `Basic ${SECRET}`,
    `Bearer ${SECRET.slice(0, 5)}`,
    `Bearer ${SECRET}x`,
    `Bearer ${'x'.repeat(2000)}`,
  ]) {
    const r = checkScriptCredential(header, SECRET);
    assert.equal(r.ok, false, String(header));
    if (!r.ok) {
      assert.match(r.why, /Authorization/);
      assert.ok(!r.why.includes(SECRET.slice(0, 5)) || header === undefined, r.why);
    }
  }
});

test("a user's token is refused here, saying where it works", () => {
  const r = checkScriptCredential(`Bearer token:tok-0123456789abcdef:${'a'.repeat(64)}`, SECRET);
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.why, /token opens wick submit, status, kill and logs/);
});
