import { randomBytes } from 'node:crypto';
import type { AnyMessageDef } from '../../protocol/registry.js';
import {
  CreateToken,
  ListTokens,
  RequestSubmissionKey,
  RevokeToken,
  SubmissionKey,
  TokenCreated,
  TokenList,
  TokenRevoked,
} from '../../protocol/tokens.js';
import { clusterKeyRing, deriveKey, type KeyRing } from '../../rpc/credentials.js';
import { type RpcSenderContext, refuse } from '../../rpc/index.js';
import type { HandlerOf } from '../../rpc/RpcEndpoint.js';
import type { LogSource } from '../../shared/logSource.js';
import type { Clock } from '../../util/clock.js';
import type { HandlerRegistry } from '../handlers/context.js';
import type { TokenRecord, TokenStore } from './TokenStore.js';

/** What TokenAccess reads of the master's tables. */
export interface OwnedApps {
  /** The submission (or cluster-mode driver) whose key registered an application. */
  submissionOf(appId: string): string | undefined;
  /** The token recorded as an application's owner (in its record: it survives a failover). */
  ownerOfApp(appId: string): string | undefined;
  /** The token recorded as a cluster-mode driver's owner (kept by its relaunches too). */
  ownerOfDriver(driverId: string): string | undefined;
}

/**
 * The messages a token may send the master, and what each asks of it: `app`/`driver`, that the
 * application or driver named be the token's own (or the token be made with --all-apps);
 * `any`, nothing more (reading the master's state, uploading an application's files, asking a
 * submission's key). Every other message is refused to a token, whatever its role says.
 */
const TOKEN_MESSAGES: Readonly<Record<string, 'any' | 'app' | 'driver'>> = {
  RequestSubmitDriver: 'any',
  RequestKillDriver: 'driver',
  RequestDriverStatus: 'driver',
  RequestKillApplication: 'app',
  RequestMasterState: 'any',
  SubscribeMasterState: 'any',
  UnsubscribeMasterState: 'any',
  RequestMissingFiles: 'any',
  UploadFileChunk: 'any',
  RequestSubmissionKey: 'any',
};

const WHAT_A_TOKEN_MAY =
  'a token may submit, watch, kill and read the logs of its applications, nothing a worker, a master or the operator does';

/**
 * Users' tokens at the master (credentials.ts, `token:<id>`): the handshake's keys for them, the
 * check every message from a token's connection passes before its handler (is the token still
 * listed and unexpired; is this a message a token may send; is the application its own), who
 * owns what, and the operator's messages that make, list and revoke tokens.
 */
export class TokenAccess {
  constructor(
    readonly store: TokenStore,
    private readonly secret: string,
    private readonly clock: Clock,
  ) {}

  /** The master's ring: the cluster's, and the tokens that are listed and unexpired. */
  keyRing(): KeyRing {
    const cluster = clusterKeyRing(this.secret);
    return {
      keyFor: (kind, id) =>
        kind === 'token'
          ? id === undefined
            ? undefined
            : this.store.keyOf(id, this.clock.now())
          : cluster.keyFor(kind, id),
    };
  }

  /** The token a message came with, checked valid now; undefined for any other principal. */
  private tokenOf(sender: RpcSenderContext, what: string): TokenRecord | undefined {
    const p = sender.connection?.principal;
    if (p?.kind !== 'token') return undefined;
    const why = this.store.whyInvalid(p.id, this.clock.now());
    if (why !== undefined) throw refuse(what, why);
    return this.store.get(p.id);
  }

  /** Wraps every handler of the Master endpoint with the token check. */
  guard(on: HandlerRegistry, apps: OwnedApps): HandlerRegistry {
    return <D extends AnyMessageDef>(def: D, handler: HandlerOf<D>) => {
      const fn = handler as (msg: unknown, ctx: RpcSenderContext) => unknown;
      // Not async: a handler that was synchronous stays so for every other principal.
      const guarded = (msg: unknown, ctx: RpcSenderContext) => {
        const token = this.tokenOf(ctx, def.type);
        if (token === undefined) return fn(msg, ctx);
        this.check(token, def.type, msg as Record<string, unknown>, apps);
        const result = fn(msg, ctx);
        if (def.type !== 'RequestSubmitDriver') return result;
        return Promise.resolve(result).then((r) => {
          const reply = r as { success?: boolean; driverId?: string } | undefined;
          if (reply?.success && reply.driverId) this.store.setOwner(reply.driverId, token.id);
          return r;
        });
      };
      on(def, guarded as HandlerOf<D>);
    };
  }

  private check(
    token: TokenRecord,
    type: string,
    msg: Record<string, unknown>,
    apps: OwnedApps,
  ): void {
    const needs = TOKEN_MESSAGES[type];
    if (needs === undefined) throw refuse(type, `${WHAT_A_TOKEN_MAY} (token ${token.name})`);
    if (needs === 'app') this.checkApp(token, String(msg.appId), type, apps);
    if (needs === 'driver') this.checkDriver(token, String(msg.driverId), type, apps);
  }

  private checkApp(token: TokenRecord, appId: string, what: string, apps: OwnedApps): void {
    if (token.allApps) return;
    const submission = apps.submissionOf(appId);
    const owner =
      apps.ownerOfApp(appId) ??
      (submission === undefined ? undefined : this.store.ownerOf(submission));
    if (owner !== token.id) {
      throw refuse(
        `${what} of ${appId}`,
        `${appId} was not submitted with token ${token.name} (${token.id}), and the token was not made with --all-apps`,
      );
    }
  }

  private checkDriver(token: TokenRecord, driverId: string, what: string, apps: OwnedApps): void {
    if (token.allApps) return;
    if ((apps.ownerOfDriver(driverId) ?? this.store.ownerOf(driverId)) === token.id) return;
    throw refuse(
      `${what} of ${driverId}`,
      `${driverId} was not submitted with token ${token.name} (${token.id}), and the token was not made with --all-apps`,
    );
  }

  /** The LogRelay's check: a token reads the logs of its own applications and drivers. */
  checkLog(sender: RpcSenderContext, source: LogSource, apps: OwnedApps): void {
    const what =
      'driverId' in source
        ? `the log of ${source.driverId}`
        : `the log of ${source.appId}/${source.execId}`;
    const token = this.tokenOf(sender, what);
    if (token === undefined) return;
    if ('driverId' in source) this.checkDriver(token, source.driverId, 'reading the log', apps);
    else this.checkApp(token, source.appId, 'reading the log', apps);
  }

  /**
   * CreateToken, ListTokens, RevokeToken (the cluster secret only) and RequestSubmissionKey.
   * `leads`: whether this master leads now; a standby makes and revokes nothing, since only the
   * leader writes the recovery store the tokens are kept in.
   */
  register(on: HandlerRegistry, leads: () => boolean = () => true): void {
    const leaderOnly = (what: string) => {
      if (!leads()) {
        throw new Error(
          `This master is not the leader: ${what} on the leading master (the one wick status shows ALIVE), which keeps tokens in the recovery store for every master`,
        );
      }
    };
    on(CreateToken, async (msg, ctx) => {
      this.operatorOnly(ctx, 'CreateToken');
      leaderOnly('make tokens');
      const { record, token } = this.store.create(
        msg.name,
        this.clock.now(),
        msg.ttlMs,
        msg.allApps,
      );
      // In the recovery store before the token is handed out: a failover right after keeps it.
      await this.store.share([record], []);
      return TokenCreated({ entry: entryOf(record), token });
    });
    on(ListTokens, (_msg, ctx) => {
      this.operatorOnly(ctx, 'ListTokens');
      return TokenList({ tokens: this.store.list().map(entryOf) });
    });
    on(RevokeToken, async (msg, ctx) => {
      this.operatorOnly(ctx, 'RevokeToken');
      leaderOnly('revoke tokens');
      const revoked = this.store.revoke(msg.nameOrId);
      await this.store.share([], revoked);
      return TokenRevoked({ revoked: revoked.map(entryOf) });
    });
    on(RequestSubmissionKey, (_msg, ctx) => {
      const p = ctx.connection?.principal;
      const id = `submission-${randomBytes(12).toString('hex')}`;
      if (p?.kind === 'token') this.store.setOwner(id, p.id);
      else if (p !== undefined && p.kind !== 'cluster') {
        throw refuse(
          'RequestSubmissionKey',
          `a submission's key is for a user's token or the cluster secret, not ${p.kind}`,
        );
      }
      return SubmissionKey({ id, key: deriveKey(this.secret, 'submission', id) });
    });
  }

  private operatorOnly(ctx: RpcSenderContext, what: string): void {
    const p = ctx.connection?.principal;
    if (p === undefined || p.kind === 'cluster') return;
    throw refuse(
      what,
      `only the cluster secret's holder (the operator) makes, lists and revokes tokens; this connection proved ${p.kind}`,
    );
  }
}

function entryOf(t: TokenRecord) {
  return {
    id: t.id,
    name: t.name,
    createdAt: t.createdAt,
    ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}),
    allApps: t.allApps,
  };
}

/**
 * A master that runs open (wick.authenticate=false) has no tokens: anyone may do anything, so
 * the token messages are answered with why.
 */
export function registerNoTokens(on: HandlerRegistry): void {
  const why = () => {
    throw new Error(
      'This master runs open (wick.authenticate=false): there are no tokens, and anyone who reaches it may submit',
    );
  };
  on(CreateToken, why);
  on(ListTokens, why);
  on(RevokeToken, why);
  on(RequestSubmissionKey, why);
}
