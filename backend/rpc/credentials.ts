import { createHmac } from 'node:crypto';

/**
 * Who may hold a key, and so who a connection can prove to be (docs/protocol.md, "Who may do
 * what"). There is one cluster secret, held by the master, its workers and the operator's tools;
 * every other key is derived from it for one holder, so that an application's processes hold a
 * key that opens nothing but their own application, and cannot be turned back into the secret
 * (an HMAC is one-way) or into another application's key:
 *
 * - `cluster`: the secret itself: master, workers, and clients (CLI, agent, web UI) run by the
 *   cluster's operator.
 * - `submission:<id>`: a driver that has not registered its application yet. `wick submit`
 *   derives one for each client-mode driver it starts, and a worker for each cluster-mode driver
 *   it launches (the id is the driver's id). It may register applications and talk to them.
 * - `app:<id>`: the processes of one application: its driver (told the key when it registers)
 *   and its executors (given it by their worker). They may talk to each other, to the master as
 *   that application's driver, and to their worker as that application's executor.
 *
 * - `token:<id>`: a user's submit credential, made by the master (`wick token create`,
 *   master/tokens/): it may submit, watch, kill and read the logs of its own applications (or of
 *   all, when made with --all-apps), and nothing a worker or master may do. Only the master
 *   accepts it, and only while the token is listed and unexpired.
 *
 * Spark standalone has the first alone, and every executor of every application holds it.
 */
export type CredentialKind = 'cluster' | 'submission' | 'app' | 'token';

/** The kinds derived from the cluster secret for one holder. */
export type DerivedKind = 'submission' | 'app' | 'token';

/** What a connection proved at its handshake: its principal. */
export type Principal =
  /** Nothing: authentication is off (`wick.authenticate=false`), so anyone gets every role. */
  | { readonly kind: 'open' }
  | { readonly kind: 'cluster' }
  | { readonly kind: DerivedKind; readonly id: string };

/** A key this env proves itself with when it dials. */
export type Credential =
  | { readonly kind: 'cluster'; readonly key: string }
  | { readonly kind: DerivedKind; readonly id: string; readonly key: string };

/**
 * The keys a listening env accepts: for a claimed principal, its key, or undefined when this env
 * does not accept it (the handshake then refuses the peer).
 */
export interface KeyRing {
  keyFor(kind: CredentialKind, id: string | undefined): string | undefined;
}

/** The key of `kind:id` under the cluster secret. */
export function deriveKey(clusterSecret: string, kind: DerivedKind, id: string): string {
  return createHmac('sha256', clusterSecret).update(`wick-${kind}-key:${id}`).digest('hex');
}

/**
 * A holder of the cluster secret (master, worker) accepts every principal it can derive — but a
 * user's token only where the tokens are listed (the master's ring, master/tokens/), so that a
 * revoked one opens nothing anywhere.
 */
export function clusterKeyRing(secret: string): KeyRing {
  return {
    keyFor: (kind, id) => {
      if (kind === 'cluster') return id === undefined ? secret : undefined;
      if (kind === 'token') return undefined;
      return id === undefined ? undefined : deriveKey(secret, kind, id);
    },
  };
}

/**
 * The keys a driver accepts: its applications' (one per WickContext that registered), so that
 * only their executors get in.
 */
export class AppKeyRing implements KeyRing {
  private readonly keys = new Map<string, string>();

  add(appId: string, key: string): void {
    this.keys.set(appId, key);
  }

  remove(appId: string): void {
    this.keys.delete(appId);
  }

  keyFor(kind: CredentialKind, id: string | undefined): string | undefined {
    return kind === 'app' && id !== undefined ? this.keys.get(id) : undefined;
  }
}

/**
 * Who a server is that proved it holds the key we dialled with: the cluster, for the secret or a
 * submission's key (nobody else can derive one, and its submitter does not listen); for an
 * application's key, that application's driver — or the cluster, which derives it too.
 */
export function serverPrincipal(credential: Credential): Principal {
  return credential.kind === 'app' ? { kind: 'app', id: credential.id } : { kind: 'cluster' };
}

/** `token:<id>:<64 hex>`, the text of a token file (`wick token create` prints it). */
export function formatToken(id: string, key: string): string {
  return `token:${id}:${key}`;
}

export function parseToken(text: string, from: string): Credential & { kind: 'token' } {
  const m = /^token:(tok-[0-9a-f]{16}):([0-9a-f]{64})$/.exec(text.trim());
  if (!m) {
    throw new Error(
      `${from} does not hold a Wick token ("token:tok-<16 hex>:<64 hex>", as \`wick token create\` prints it; got ${text.trim().length} characters)`,
    );
  }
  return { kind: 'token', id: m[1] as string, key: m[2] as string };
}

/** The key a principal proves: "cluster secret", "app:app-… key". */
export function keyText(p: Principal): string {
  return p.kind === 'cluster' ? 'cluster secret' : `${principalText(p)} key`;
}

/** `cluster`, `app:app-…`: for logs and errors. */
export function principalText(p: Principal): string {
  return p.kind === 'open' || p.kind === 'cluster' ? p.kind : `${p.kind}:${p.id}`;
}

/**
 * WICK_APP_CREDENTIAL, how a worker or `wick submit` hands a driver or an executor its key:
 * `<kind>:<id>:<key>`. Ids are Wick's (app-…, driver-…, submission-…), which hold no colon.
 */
export const APP_CREDENTIAL_ENV = 'WICK_APP_CREDENTIAL';

export function formatCredential(c: Credential & { kind: 'submission' | 'app' }): string {
  return `${c.kind}:${c.id}:${c.key}`;
}

export function parseCredential(text: string): Credential & { kind: 'submission' | 'app' } {
  const m = /^(submission|app):([A-Za-z0-9._-]{1,200}):([0-9a-f]{64})$/.exec(text.trim());
  if (!m) {
    throw new Error(
      `${APP_CREDENTIAL_ENV} is not "<submission|app>:<id>:<64 hex digits>" (got ${text.length} characters); it is set by the worker or \`wick submit\` that started this process`,
    );
  }
  return { kind: m[1] as 'submission' | 'app', id: m[2] as string, key: m[3] as string };
}
