/**
 * The web UI's credentials as pure functions of the secret and the clock: login tokens (current,
 * once), session cookies, and the cookie's name; neither kind stands for the other.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  checkLoginToken,
  checkSession,
  isDashboardRoute,
  isSecret,
  LOGIN_LINK_TTL_MS,
  loginLink,
  MAX_LOGIN_LINK_TTL_MS,
  mintLoginToken,
  mintSession,
  SESSION_TTL_MS,
  sessionCookieName,
  UsedLinks,
} from '../../backend/shared/uiLogin.js';

const SECRET = 'unit-test-cluster-secret-01';
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);

test('a token made now is good until its expiry, and only under its secret', () => {
  const token = mintLoginToken(SECRET, NOW);
  assert.match(token, /^\d{13}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
  const ok = checkLoginToken(SECRET, token, NOW + LOGIN_LINK_TTL_MS - 1);
  assert.ok(ok.ok);
  assert.equal(ok.expiry, NOW + LOGIN_LINK_TTL_MS);
  const late = checkLoginToken(SECRET, token, NOW + LOGIN_LINK_TTL_MS);
  assert.ok(!late.ok);
  assert.match(
    late.why,
    /expired at 2026-12-02T12:05:00\.000Z \(it is 2026-12-02T12:05:00\.000Z\)/,
  );
  const other = checkLoginToken('another-cluster-secret-000', token, NOW);
  assert.ok(!other.ok && /not made with this cluster's secret/.test(other.why));
  assert.notEqual(mintLoginToken(SECRET, NOW), token, 'each token has its own nonce');
});

test('a token whose expiry or nonce was changed, or whose signature is spelled otherwise, is refused', () => {
  const token = mintLoginToken(SECRET, NOW);
  const [expiry, nonce, sig] = token.split('.') as [string, string, string];
  const tampered = [
    `${Number(expiry) + 1}.${nonce}.${sig}`,
    `${expiry}.${nonce.slice(0, -1)}${nonce.endsWith('A') ? 'B' : 'A'}.${sig}`,
    // Base64url spells the last bits of 32 bytes four ways; only the one written is valid.
    ...['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'].map(
      (c) => `${expiry}.${nonce}.${sig.slice(0, -1)}${c}`,
    ),
  ].filter((x) => x !== token);
  for (const bad of tampered) {
    const r = checkLoginToken(SECRET, bad, NOW);
    assert.ok(!r.ok, bad);
  }
});

test('malformed tokens are named; a token too far ahead is refused (bounded nonce memory)', () => {
  for (const bad of ['', 'x', '1.2.3', `${'9'.repeat(13)}.${'a'.repeat(22)}`, 'a'.repeat(5000)]) {
    const r = checkLoginToken(SECRET, bad, NOW);
    assert.ok(!r.ok, bad);
    assert.match(r.why, bad === '' ? /has no token/ : /^Invalid login token "/);
    assert.ok(r.why.length < 400, 'the value is quoted, cut short');
  }
  assert.match((checkLoginToken(SECRET, undefined, NOW) as { why: string }).why, /has no token/);
  const far = checkLoginToken(SECRET, mintLoginToken(SECRET, NOW, MAX_LOGIN_LINK_TTL_MS + 1), NOW);
  assert.ok(!far.ok && /more than 15 minutes after now/.test(far.why));
  assert.ok(checkLoginToken(SECRET, mintLoginToken(SECRET, NOW, MAX_LOGIN_LINK_TTL_MS), NOW).ok);
});

test('a link is used once; used ones are forgotten when they expire; the store is bounded', () => {
  const used = new UsedLinks(4);
  assert.equal(used.claim('a', NOW + 10, NOW), 'ok');
  assert.equal(used.claim('a', NOW + 10, NOW), 'used');
  assert.equal(used.claim('b', NOW + 10, NOW), 'ok');
  assert.equal(used.claim('c', NOW + 20, NOW), 'ok');
  assert.equal(used.claim('d', NOW + 20, NOW), 'ok');
  assert.equal(used.claim('e', NOW + 20, NOW), 'full');
  // Once a and b expire they make room; c is still remembered.
  assert.equal(used.claim('e', NOW + 20, NOW + 15), 'ok');
  assert.equal(used.size, 3);
  assert.equal(used.claim('c', NOW + 20, NOW + 15), 'used');
});

test('a session lasts 12 hours; a login token is no session, nor a session a token', () => {
  const session = mintSession(SECRET, NOW);
  assert.equal(checkSession(SECRET, session, NOW + SESSION_TTL_MS - 1), 'ok');
  assert.equal(checkSession(SECRET, session, NOW + SESSION_TTL_MS), 'expired');
  assert.equal(checkSession('another-cluster-secret-000', session, NOW), 'invalid');
  assert.equal(checkSession(SECRET, mintLoginToken(SECRET, NOW), NOW), 'invalid');
  assert.ok(!checkLoginToken(SECRET, session, NOW).ok);
  assert.equal(checkSession(SECRET, 'garbage', NOW), 'invalid');
});

test('the cookie is named per cluster; the link goes to /login of the UI given', () => {
  const name = sessionCookieName(SECRET);
  assert.match(name, /^wick_session_[0-9a-f]{12}$/);
  assert.equal(sessionCookieName(SECRET), name);
  assert.notEqual(sessionCookieName('another-cluster-secret-000'), name);
  assert.ok(!name.includes(SECRET));
  const link = new URL(loginLink('http://10.0.0.5:8080', SECRET, NOW));
  assert.equal(`${link.origin}${link.pathname}`, 'http://10.0.0.5:8080/login');
  assert.ok(checkLoginToken(SECRET, link.searchParams.get('token') ?? '', NOW).ok);
});

test('a link may carry a dashboard route to move on to after the login, and nothing else', () => {
  const link = new URL(loginLink('http://10.0.0.5:8080', SECRET, NOW, '#/app/app-20261203-0001'));
  assert.equal(link.searchParams.get('to'), '#/app/app-20261203-0001');
  for (const bad of [
    'https://evil.example/',
    '//evil.example',
    '/x',
    '#/a/../../b?c',
    '#/<x>',
    '#',
  ])
    assert.throws(
      () => loginLink('http://10.0.0.5:8080', SECRET, NOW, bad),
      /Invalid dashboard route/,
      bad,
    );
  assert.ok(isDashboardRoute('#/workers'));
  assert.ok(!isDashboardRoute(`#/${'a'.repeat(400)}`));
});

test('isSecret: equal strings only, whatever their lengths', () => {
  assert.ok(isSecret(SECRET, SECRET));
  for (const other of ['', SECRET.slice(0, -1), `${SECRET}x`, SECRET.toUpperCase()]) {
    assert.ok(!isSecret(other, SECRET), other);
  }
});
