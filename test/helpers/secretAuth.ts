import { clusterKeyRing } from '../../backend/rpc/credentials.js';

/** Handshake options of a holder of `secret`, or of an open side without one. */
export function secretAuth(secret: string | undefined) {
  return secret === undefined
    ? { credential: undefined, keys: undefined }
    : { credential: { kind: 'cluster' as const, key: secret }, keys: clusterKeyRing(secret) };
}
