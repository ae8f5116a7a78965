import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The web UI's credentials, all made from the cluster secret, so that whoever holds the secret
 * (`wick ui-url`) can make a login link without asking any server, and every web UI of the
 * cluster (the master's and each worker's) can check one without keeping anything but the
 * nonces of the links used:
 *
 * - A login link's token, `<expiry>.<nonce>.<signature>`: valid a few minutes, once, and on one
 *   web UI only: its signature names the UI it was made for (its audience: `master`, or
 *   `worker:<id>`), so a link used on the master opens no worker's UI — each UI keeps only the
 *   nonces it saw, and a link valid everywhere would be valid once per UI.
 * - A session cookie, `<expiry>.<id>.<signature>`: signed rather than kept server-side, so a
 *   worker's UI accepts the master's session (browsers send a host's cookies to all its ports)
 *   and no server's memory grows with logins. The price: a session cannot be ended before its
 *   expiry except by changing the secret.
 *
 * Each signature is HMAC-SHA256 under the secret of a message naming its kind, so neither kind
 * can stand for the other, nor for the keys credentials.ts derives (`wick-app-key:…`).
 */

/** How long a link from `wick ui-url` is valid. */
export const LOGIN_LINK_TTL_MS = 5 * 60_000;
/** The latest expiry a link may have: its lifetime plus room for clocks that differ. */
export const MAX_LOGIN_LINK_TTL_MS = 15 * 60_000;
/** How long a session lasts after a login. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** Links used and not yet expired, at most (each a few dozen bytes): then logins wait. */
export const MAX_USED_LINKS = 10_000;

const SIGNED = /^(\d{13})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** The web UI a login link opens: the master's, or worker `id`'s. */
export const MASTER_UI = 'master';
export const workerUi = (id: string) => `worker:${id}`;

function signature(
  secret: string,
  kind: 'login' | 'session',
  expiry: number,
  id: string,
  audience?: string,
): string {
  // A session is good on every UI of the cluster (a host's cookies go to all its ports); a login
  // link names its UI (v2: v1 links named none).
  const message =
    kind === 'login'
      ? `wick-ui-login:v2:${expiry}:${id}:${audience ?? MASTER_UI}`
      : `wick-ui-${kind}:v1:${expiry}:${id}`;
  return createHmac('sha256', secret).update(message).digest('base64url');
}

function mint(
  secret: string,
  kind: 'login' | 'session',
  expiry: number,
  audience?: string,
): string {
  const id = randomBytes(16).toString('base64url');
  return `${expiry}.${id}.${signature(secret, kind, expiry, id, audience)}`;
}

/** A signed value's parts when it is well formed and its signature is right. */
function verify(
  secret: string,
  kind: 'login' | 'session',
  value: string,
  audience?: string,
): { expiry: number; id: string } | undefined {
  const m = SIGNED.exec(value);
  if (!m) return undefined;
  const [, expiryText, id, given] = m as unknown as [string, string, string, string];
  const expiry = Number(expiryText);
  // As text, not decoded: base64url has several spellings of the same last bits, and only the
  // one this code writes is the signature.
  const want = Buffer.from(signature(secret, kind, expiry, id, audience));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want) ? { expiry, id } : undefined;
}

export function mintLoginToken(
  secret: string,
  now = Date.now(),
  ttlMs = LOGIN_LINK_TTL_MS,
  audience = MASTER_UI,
): string {
  return mint(secret, 'login', now + ttlMs, audience);
}

/** `http://host:port/login?token=…` for the web UI at `webUiUrl`, which is `audience`. */
export function loginLink(
  webUiUrl: string,
  secret: string,
  now = Date.now(),
  to?: string,
  audience = MASTER_UI,
): string {
  const url = new URL('/login', webUiUrl);
  url.searchParams.set('token', mintLoginToken(secret, now, LOGIN_LINK_TTL_MS, audience));
  if (to !== undefined) {
    if (!isDashboardRoute(to))
      throw new Error(
        `Invalid dashboard route ${JSON.stringify(to)}: expected #/… (e.g. #/app/app-…)`,
      );
    url.searchParams.set('to', to);
  }
  return url.toString();
}

/**
 * Where a login may move on to besides the front page: a route of the dashboard on this UI
 * (`#/app/app-…`), nothing else, so that a login link cannot send anyone to another site.
 */
export function isDashboardRoute(to: string): boolean {
  return /^#\/[A-Za-z0-9_.~%-]+(\/[A-Za-z0-9_.~%-]+)*$/.test(to) && to.length <= 300;
}

export type LoginCheck = { ok: true; nonce: string; expiry: number } | { ok: false; why: string };

/** Whether a login token is this cluster's and current (not whether it was used: UsedLinks). */
export function checkLoginToken(
  secret: string,
  token: string | undefined,
  now: number,
  /** This UI: a link made for another is refused. */
  audience = MASTER_UI,
): LoginCheck {
  const again = 'run `wick ui-url` for a new link';
  if (!token) return { ok: false, why: `This login link has no token: ${again}` };
  const signed = verify(secret, 'login', token, audience);
  if (!signed) {
    return SIGNED.test(token)
      ? {
          ok: false,
          why: `This login link was not made with this cluster's secret for this web UI (${audience}; a link opens the one UI it was made for, once): ${again}`,
        }
      : {
          ok: false,
          why: `Invalid login token ${JSON.stringify(token.slice(0, 100))}: expected <expiry>.<nonce>.<signature>, as \`wick ui-url\` prints it`,
        };
  }
  const at = (t: number) => new Date(t).toISOString();
  if (signed.expiry <= now) {
    return {
      ok: false,
      why: `This login link expired at ${at(signed.expiry)} (it is ${at(now)}): ${again}`,
    };
  }
  if (signed.expiry > now + MAX_LOGIN_LINK_TTL_MS) {
    return {
      ok: false,
      why: `This login link expires at ${at(signed.expiry)}, more than ${MAX_LOGIN_LINK_TTL_MS / 60_000} minutes after now (${at(now)}): check this machine's clock, or ${again}`,
    };
  }
  return { ok: true, nonce: signed.id, expiry: signed.expiry };
}

/** The nonces of the login links used, each kept until its link expires: a link works once. */
export class UsedLinks {
  private readonly used = new Map<string, number>();

  constructor(private readonly max = MAX_USED_LINKS) {}

  get size(): number {
    return this.used.size;
  }

  /** Records a use; 'used' when the link was used before, 'full' when too many are kept. */
  claim(nonce: string, expiry: number, now: number): 'ok' | 'used' | 'full' {
    if (this.used.has(nonce)) return 'used';
    if (this.used.size >= this.max / 2) {
      for (const [n, e] of this.used) if (e <= now) this.used.delete(n);
    }
    if (this.used.size >= this.max) return 'full';
    this.used.set(nonce, expiry);
    return 'ok';
  }
}

export function mintSession(secret: string, now = Date.now()): string {
  return mint(secret, 'session', now + SESSION_TTL_MS);
}

/** 'ok', or why a session cookie is refused. */
export function checkSession(
  secret: string,
  value: string,
  now: number,
): 'ok' | 'expired' | 'invalid' {
  const signed = verify(secret, 'session', value);
  if (!signed || signed.expiry > now + SESSION_TTL_MS) return 'invalid';
  return signed.expiry <= now ? 'expired' : 'ok';
}

/**
 * The session cookie's name: one per cluster (a tag of its secret, which says nothing of it), so
 * that two clusters' UIs on one host do not overwrite each other's login.
 */
export function sessionCookieName(secret: string): string {
  return `wick_session_${createHmac('sha256', secret).update('wick-ui-cookie:v1').digest('hex').slice(0, 12)}`;
}

/** Whether `given` is the secret, in time that does not depend on where they differ. */
export function isSecret(given: string, secret: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}
