import type { RpcEndpointRef } from '../../rpc/index.js';

/** One follow the master relays: the worker pushes under `relayId`, the client hears `clientFollowId`. */
export interface RelayedFollow {
  /** The follow id the worker knows: the master's own, so that two clients' ids never clash there. */
  readonly relayId: string;
  /** The client's RpcEnv: its disconnection ends the follow. */
  readonly clientAddress: string;
  /** The client's follower endpoint, where chunks go. */
  readonly client: RpcEndpointRef;
  readonly clientFollowId: string;
  readonly worker: RpcEndpointRef;
  /** The offset after the last byte passed on: where a follow cut short would resume. */
  next: number;
}

/**
 * The follows the master relays, by the worker's id for them and by the client's (its env and its
 * follow id), with a count per client for the limit. Pure bookkeeping: LogRelay sends the messages.
 */
export class RelayedFollows {
  private readonly byRelayId = new Map<string, RelayedFollow>();
  private readonly byClientKey = new Map<string, RelayedFollow>();
  private readonly perClient = new Map<string, number>();

  get size(): number {
    return this.byRelayId.size;
  }

  countFor(clientAddress: string): number {
    return this.perClient.get(clientAddress) ?? 0;
  }

  add(f: RelayedFollow): void {
    this.byRelayId.set(f.relayId, f);
    this.byClientKey.set(keyOf(f.clientAddress, f.clientFollowId), f);
    this.perClient.set(f.clientAddress, this.countFor(f.clientAddress) + 1);
  }

  byRelay(relayId: string): RelayedFollow | undefined {
    return this.byRelayId.get(relayId);
  }

  byClient(clientAddress: string, clientFollowId: string): RelayedFollow | undefined {
    return this.byClientKey.get(keyOf(clientAddress, clientFollowId));
  }

  /** Forgets a follow; false when it was gone already (each end is handled once). */
  remove(f: RelayedFollow): boolean {
    if (this.byRelayId.get(f.relayId) !== f) return false;
    this.byRelayId.delete(f.relayId);
    const key = keyOf(f.clientAddress, f.clientFollowId);
    if (this.byClientKey.get(key) === f) this.byClientKey.delete(key);
    const n = this.countFor(f.clientAddress) - 1;
    if (n > 0) this.perClient.set(f.clientAddress, n);
    else this.perClient.delete(f.clientAddress);
    return true;
  }

  /** The follows whose client or worker is the RpcEnv at `address`. */
  touching(address: string): RelayedFollow[] {
    return [...this.byRelayId.values()].filter(
      (f) => f.clientAddress === address || f.worker.address === address,
    );
  }

  all(): RelayedFollow[] {
    return [...this.byRelayId.values()];
  }
}

function keyOf(clientAddress: string, followId: string): string {
  return `${clientAddress}\n${followId}`;
}
