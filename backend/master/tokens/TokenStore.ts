import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MAX_TOKENS } from '../../protocol/tokens.js';
import { deriveKey, formatToken } from '../../rpc/credentials.js';

/** What the master keeps of a token: never the token, only the SHA-256 of its key. */
export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
  readonly expiresAt?: number;
  readonly allApps: boolean;
  /** SHA-256 (hex) of the token's key. */
  readonly keySha256: string;
}

/** Where else tokens are kept: the master's recovery store (persistence/PersistenceEngine.ts). */
export interface TokenRecordStore {
  addToken(token: TokenRecord): Promise<void>;
  removeToken(id: string): Promise<void>;
}

/** The most submissions whose owner is remembered (oldest forgotten first). */
export const MAX_OWNED_SUBMISSIONS = 20_000;

interface StoreFile {
  version: 1;
  /**
   * Whether the tokens here are a copy of a recovery store's (written after this master adopted
   * the store's, or made and revoked through it). Absent in files from before tokens were kept in
   * the recovery store: those tokens were never anywhere else, and the first master to lead takes
   * them there (adoptShared) rather than dropping them.
   */
  inStore?: boolean;
  tokens: TokenRecord[];
  /** submission or driver id → the token that submitted it. */
  owners: [string, string][];
}

/**
 * Users' submit tokens, kept in one file beside the cluster secret (or in the recovery
 * directory), readable by the master's user alone, so they survive a restart. A token's key is
 * derived from the cluster secret and its id (credentials.ts), so the master needs to store
 * nothing that opens anything: the file holds the key's hash, which the master checks a derived
 * key against — a token made under another secret, or a record copied from elsewhere, opens
 * nothing. Who submitted what (owners) is kept here too, for the logs of ended applications.
 * With recovery the tokens are kept in the recovery store as well (keepIn), which counts when a
 * master is elected leader (adoptShared): every master that may lead shares it, so a failover
 * keeps them (docs/security.md, "Across a failover").
 */
export class TokenStore {
  private readonly tokens = new Map<string, TokenRecord>();
  private readonly owners = new Map<string, string>();
  /**
   * The recovery store (wick.deploy.recoveryMode), when there is one: every master that may lead
   * shares it, so the tokens live there and this file is this master's copy (keepIn).
   */
  private shared: TokenRecordStore | undefined;
  /** This file's tokens are a copy of the recovery store's (StoreFile.inStore). */
  private inStore = false;

  constructor(
    readonly file: string,
    private readonly secret: string,
  ) {
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new Error(`Cannot read the tokens file ${this.file}: ${(err as Error).message}`);
    }
    let parsed: StoreFile;
    try {
      parsed = JSON.parse(text) as StoreFile;
    } catch (err) {
      throw new Error(
        `The tokens file ${this.file} is not JSON (${(err as Error).message}); move it away to start with no tokens`,
      );
    }
    this.inStore = parsed.inStore === true;
    for (const t of (parsed.tokens ?? []).slice(0, MAX_TOKENS)) {
      // A hand-edited entry that is not what this master writes is left out, not served.
      if (isRecord(t)) this.tokens.set(t.id, t);
    }
    for (const [s, t] of (parsed.owners ?? []).slice(-MAX_OWNED_SUBMISSIONS)) {
      if (typeof s === 'string' && typeof t === 'string') this.owners.set(s, t);
    }
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const body: StoreFile = {
      version: 1,
      inStore: this.inStore,
      tokens: [...this.tokens.values()],
      owners: [...this.owners.entries()],
    };
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  create(
    name: string,
    now: number,
    ttlMs: number | undefined,
    allApps: boolean,
  ): { record: TokenRecord; token: string } {
    if (this.tokens.size >= MAX_TOKENS) {
      throw new Error(
        `This master keeps ${MAX_TOKENS} tokens already, the most it keeps: revoke some first (wick token list)`,
      );
    }
    const id = `tok-${randomBytes(8).toString('hex')}`;
    const key = deriveKey(this.secret, 'token', id);
    const record: TokenRecord = {
      id,
      name,
      createdAt: now,
      ...(ttlMs !== undefined ? { expiresAt: now + ttlMs } : {}),
      allApps,
      keySha256: sha256(key),
    };
    this.tokens.set(id, record);
    this.save();
    return { record, token: formatToken(id, key) };
  }

  /** Keeps the tokens in `store` too; it is the one that counts when this master leads. */
  keepIn(store: TokenRecordStore): void {
    this.shared = store;
  }

  /** Writes a token made or revoked here to the shared store, before the operator is answered. */
  async share(made: readonly TokenRecord[], revoked: readonly TokenRecord[]): Promise<void> {
    if (!this.shared) return;
    for (const t of made) await this.shared.addToken(t);
    for (const t of revoked) await this.shared.removeToken(t.id);
  }

  /**
   * A master elected leader takes the tokens of the shared store as they are: those made on the
   * master that led before, without those revoked there (its own copy may be older). Tokens of a
   * file that never was a copy of the store (made before tokens were kept there, or while this
   * master ran without recovery) are first written to the store, so an upgrade or a switch to
   * recovery revokes nobody's token. What could not be written stays in the file, and the next
   * election tries again. Returns how many tokens were taken to the store.
   */
  async adoptShared(records: readonly TokenRecord[]): Promise<number> {
    const stored = new Set(records.map((t) => t.id));
    const own = this.inStore ? [] : [...this.tokens.values()].filter((t) => !stored.has(t.id));
    let failure: Error | undefined;
    try {
      await this.share(own, []);
    } catch (err) {
      failure = err as Error;
    }
    const hadTokens = this.tokens.size > 0;
    const before = JSON.stringify([this.inStore, ...this.tokens.values()]);
    this.tokens.clear();
    for (const t of [...records, ...own].slice(0, MAX_TOKENS))
      if (isRecord(t)) this.tokens.set(t.id, t);
    this.inStore = failure === undefined;
    // Written only when it changed: a master that never had a token leaves no file.
    const changed = JSON.stringify([this.inStore, ...this.tokens.values()]) !== before;
    if (changed && (hadTokens || this.tokens.size > 0)) this.save();
    if (failure) {
      throw new Error(
        `Could not copy ${own.length} token(s) of ${this.file} into the recovery store (kept here, and tried again at the next election): ${failure.message}`,
      );
    }
    return own.length;
  }

  list(): TokenRecord[] {
    return [...this.tokens.values()];
  }

  /** Revokes the token of that id, or every token of that name; what was revoked. */
  revoke(nameOrId: string): TokenRecord[] {
    const gone = [...this.tokens.values()].filter((t) => t.id === nameOrId || t.name === nameOrId);
    for (const t of gone) this.tokens.delete(t.id);
    if (gone.length > 0) this.save();
    return gone;
  }

  /** Why the token `id` opens nothing now, or undefined when it is valid. */
  whyInvalid(id: string, now: number): string | undefined {
    const t = this.tokens.get(id);
    if (!t) return `token ${id} is not one of this master's (revoked, or never made here)`;
    if (t.expiresAt !== undefined && now >= t.expiresAt) {
      return `token ${id} (${t.name}) expired at ${new Date(t.expiresAt).toISOString()}`;
    }
    if (t.keySha256 !== sha256(deriveKey(this.secret, 'token', id))) {
      return `token ${id} (${t.name}) was made under another cluster secret`;
    }
    return undefined;
  }

  get(id: string): TokenRecord | undefined {
    return this.tokens.get(id);
  }

  /** The key of a valid token, for the handshake; undefined when it opens nothing. */
  keyOf(id: string, now: number): string | undefined {
    return this.whyInvalid(id, now) === undefined ? deriveKey(this.secret, 'token', id) : undefined;
  }

  setOwner(submission: string, tokenId: string): void {
    this.owners.delete(submission);
    this.owners.set(submission, tokenId);
    while (this.owners.size > MAX_OWNED_SUBMISSIONS) {
      const oldest = this.owners.keys().next().value as string;
      this.owners.delete(oldest);
    }
    this.save();
  }

  ownerOf(submission: string): string | undefined {
    return this.owners.get(submission);
  }
}

function isRecord(t: TokenRecord | undefined): t is TokenRecord {
  return (
    typeof t?.id === 'string' &&
    /^tok-[0-9a-f]{16}$/.test(t.id) &&
    typeof t.name === 'string' &&
    /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/.test(t.name) &&
    Number.isSafeInteger(t.createdAt) &&
    t.createdAt >= 0 &&
    (t.expiresAt === undefined || (Number.isSafeInteger(t.expiresAt) && t.expiresAt >= 0)) &&
    typeof t.allApps === 'boolean' &&
    typeof t.keySha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(t.keySha256)
  );
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
