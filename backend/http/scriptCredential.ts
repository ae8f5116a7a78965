import { isSecret } from '../shared/uiLogin.js';

/**
 * What a script sends to a Wick web port instead of a browser's login: `Authorization: Bearer
 * <credential>`. Every door that takes a script's credential asks this one function (the web UI's
 * login check, the REST submission server), so that a new kind of credential (a user's own
 * token) is taught to all of them at once, here.
 */
export type ScriptCredential =
  | { ok: true /** Who holds it: the cluster secret's holder. */; principal: 'cluster' }
  | { ok: false /** Why it is refused, as a sentence without the value. */; why: string };

/** A secret may hold spaces (it is trimmed where it is read, so it is trimmed here too). */
const BEARER = /^Bearer +(.{1,1024})$/i;

/** The token of an `Authorization: Bearer …` header; undefined when the header is not one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const m = BEARER.exec(authorization);
  return m ? (m[1] as string).trim() : undefined;
}

/** Checks the `Authorization` header a script sent against the cluster's secret. */
export function checkScriptCredential(
  authorization: string | undefined,
  secret: string,
): ScriptCredential {
  if (authorization === undefined) {
    return {
      ok: false,
      why: 'No Authorization header: send "Authorization: Bearer <cluster secret>"',
    };
  }
  const token = bearerToken(authorization);
  if (token !== undefined && isSecret(token, secret)) return { ok: true, principal: 'cluster' };
  // A user's token (wick token create) opens the master's RPC only: the web UI shows every
  // application's logs, and the REST server compiles a file of the master's machine, each more
  // than a token's own applications.
  if (token?.startsWith('token:')) {
    return {
      ok: false,
      why: "A user's token opens wick submit, status, kill and logs (--token-file), not this web port: it takes the cluster secret",
    };
  }
  return { ok: false, why: 'The Authorization header is not "Bearer <the cluster secret>"' };
}
