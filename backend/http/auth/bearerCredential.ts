import { timingSafeEqual } from 'node:crypto';
import type { TokenRecord } from '../../master/tokens/TokenStore.js';
import { parseToken } from '../../rpc/credentials.js';

/** Who an `Authorization: Bearer …` header proves: the operator, a user's token, or nobody. */
export type BearerPrincipal =
  | { readonly kind: 'cluster' }
  | { readonly kind: 'token'; readonly token: TokenRecord }
  | { readonly kind: 'refused'; readonly why: string };

/** What the check reads: the cluster secret, and the master's tokens (master/tokens/TokenStore). */
export interface BearerKeys {
  readonly secret: string;
  readonly tokens?: {
    whyInvalid(id: string, now: number): string | undefined;
    keyOf(id: string, now: number): string | undefined;
    get(id: string): TokenRecord | undefined;
  };
  readonly now?: () => number;
}

/**
 * The one check of a credential sent over HTTP (`Authorization: Bearer <cluster secret>` or
 * `Bearer token:tok-…:<key>`, the line `wick token create` prints), for every HTTP route that
 * takes one (the REST submission server among them): the same principals as the RPC handshake's,
 * so that a token opens over HTTP exactly what it opens over RPC — its own applications
 * (TokenAccess decides which) — and a revoked or expired one nothing. Constant-time comparisons.
 */
export function checkBearer(header: string | undefined, keys: BearerKeys): BearerPrincipal {
  const m = /^Bearer +(.{1,1024})$/i.exec(header ?? '');
  if (!m) return { kind: 'refused', why: 'No "Authorization: Bearer <credential>" header' };
  const sent = (m[1] as string).trim();
  if (equal(sent, keys.secret)) return { kind: 'cluster' };
  if (!sent.startsWith('token:')) {
    return {
      kind: 'refused',
      why: 'The Bearer credential is neither the cluster secret nor a token',
    };
  }
  if (!keys.tokens) return { kind: 'refused', why: 'This server takes no tokens' };
  let token: { id: string; key: string };
  try {
    token = parseToken(sent, 'The Bearer credential');
  } catch (err) {
    return { kind: 'refused', why: (err as Error).message };
  }
  const now = (keys.now ?? Date.now)();
  const why = keys.tokens.whyInvalid(token.id, now);
  if (why !== undefined) return { kind: 'refused', why: `Refused: ${why}` };
  const key = keys.tokens.keyOf(token.id, now);
  const record = keys.tokens.get(token.id);
  if (key === undefined || record === undefined || !equal(token.key, key)) {
    return { kind: 'refused', why: `Refused: the key sent for token ${token.id} is not its key` };
  }
  return { kind: 'token', token: record };
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
