import { type Static, Type } from '@sinclair/typebox';
import {
  ApplicationDescription,
  DriverDescription,
  EndpointRefData,
} from '../../protocol/common.js';
import { ResourceAddresses } from '../../protocol/resources.js';
import { TokenId, TokenName } from '../../protocol/tokens.js';

/**
 * Where the Master keeps what it must not forget across a restart (Spark's PersistenceEngine).
 * Every change to workers, applications and drivers goes through it before it is acknowledged.
 * Records are plain JSON with schemas, so a corrupt or foreign file is recognised and skipped.
 */
export const PersistedWorker = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    host: Type.String(),
    port: Type.Integer(),
    cores: Type.Integer({ minimum: 0 }),
    memory: Type.Integer({ minimum: 0 }),
    endpoint: EndpointRefData,
    webUiAddress: Type.String(),
    /** Its custom resources: a recovered worker's executors hold some of them. */
    resources: Type.Optional(ResourceAddresses),
  },
  { additionalProperties: false },
);
export type PersistedWorker = Static<typeof PersistedWorker>;

export const PersistedApp = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    desc: ApplicationDescription,
    driver: EndpointRefData,
    startTime: Type.Integer(),
    /** The submission whose key registered it: its driver proves that key after a failover. */
    submission: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** The user's token that submitted it: it alone (and --all-apps tokens) may kill it. */
    owner: Type.Optional(TokenId),
  },
  { additionalProperties: false },
);
export type PersistedApp = Static<typeof PersistedApp>;

export const PersistedDriver = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    desc: DriverDescription,
    submitDate: Type.Integer(),
    /** The driver it replaces (a relaunch): recovery drops that one's record if it is left. */
    relaunchedFrom: Type.Optional(Type.String({ minLength: 1 })),
    /** The user's token that submitted it (a relaunch keeps it). */
    owner: Type.Optional(TokenId),
  },
  { additionalProperties: false },
);
export type PersistedDriver = Static<typeof PersistedDriver>;

/**
 * A user's token (tokens/TokenStore.ts: its id, name, times and the SHA-256 of its key, never the
 * key): kept with the applications so that every master that leads after a failover knows the
 * tokens the last leader made and revoked.
 */
export const PersistedToken = Type.Object(
  {
    id: TokenId,
    name: TokenName,
    createdAt: Type.Integer({ minimum: 0 }),
    expiresAt: Type.Optional(Type.Integer({ minimum: 0 })),
    allApps: Type.Boolean(),
    keySha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);
export type PersistedToken = Static<typeof PersistedToken>;

export interface PersistedState {
  apps: PersistedApp[];
  drivers: PersistedDriver[];
  workers: PersistedWorker[];
  /** Users' tokens; undefined from a store that keeps nothing (no recovery). */
  tokens?: PersistedToken[];
}

export interface PersistenceEngine {
  addWorker(worker: PersistedWorker): Promise<void>;
  removeWorker(id: string): Promise<void>;
  addApplication(app: PersistedApp): Promise<void>;
  removeApplication(id: string): Promise<void>;
  addDriver(driver: PersistedDriver): Promise<void>;
  removeDriver(id: string): Promise<void>;
  addToken(token: PersistedToken): Promise<void>;
  removeToken(id: string): Promise<void>;
  readPersistedData(): Promise<PersistedState>;
  close(): Promise<void>;
}

/** The default: remembers nothing (Spark's BlackHolePersistenceEngine). */
export class BlackHolePersistenceEngine implements PersistenceEngine {
  async addWorker(): Promise<void> {}
  async removeWorker(): Promise<void> {}
  async addApplication(): Promise<void> {}
  async removeApplication(): Promise<void> {}
  async addDriver(): Promise<void> {}
  async removeDriver(): Promise<void> {}
  async addToken(): Promise<void> {}
  async removeToken(): Promise<void> {}
  async readPersistedData(): Promise<PersistedState> {
    return { apps: [], drivers: [], workers: [] };
  }
  async close(): Promise<void> {}
}
