import type { LogFollower } from './LogFollower.js';

interface Follow {
  readonly follower: LogFollower;
  /** The RpcEnv the FollowLog came from: its disconnection ends the follow. */
  readonly address: string;
}

/**
 * The log follows a worker serves, by follower endpoint and follow id: a new follow with the same
 * pair replaces the old one, a StopFollowLog stops it, a follower's disconnection ends each of its
 * follows, and an executor's or a driver's change of state makes every follower look again
 * whether its process is done.
 */
export class LogFollows {
  private readonly follows = new Map<string, Follow>();

  /** `changed`: told when the number of follows changes (the worker's page shows it). */
  constructor(private readonly changed: () => void = () => {}) {}

  get size(): number {
    return this.follows.size;
  }

  /** Registers a follow, stopping the one it replaces. */
  add(followerRef: string, followId: string, address: string, follower: LogFollower): void {
    const key = keyOf(followerRef, followId);
    this.follows.get(key)?.follower.stop('replaced by a new follow with the same id');
    this.follows.set(key, { follower, address });
    this.changed();
  }

  /** Forgets a follow that ended (unless another follow has replaced it meanwhile). */
  ended(followerRef: string, followId: string, follower: LogFollower): void {
    const key = keyOf(followerRef, followId);
    if (this.follows.get(key)?.follower === follower) {
      this.follows.delete(key);
      this.changed();
    }
  }

  /** StopFollowLog: stops the follows with this id, whichever endpoint follows. */
  stop(followId: string): void {
    const suffix = `\n${followId}`;
    for (const [key, f] of this.follows) {
      if (key.endsWith(suffix)) f.follower.stop('stopped by the follower');
    }
  }

  /** An executor or driver changed state: followers re-check whether their process is done. */
  sourceChanged(): void {
    for (const f of this.follows.values()) f.follower.poke();
  }

  /** The RpcEnv at `address` disconnected: its follows end. */
  dropAddress(address: string): void {
    for (const f of this.follows.values()) {
      if (f.address === address) f.follower.stop('follower disconnected');
    }
  }

  /** The worker stops: every follow ends. */
  stopAll(): void {
    for (const f of this.follows.values()) f.follower.stop('worker stopped');
  }
}

function keyOf(followerRef: string, followId: string): string {
  return `${followerRef}\n${followId}`;
}
