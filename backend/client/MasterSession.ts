import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { parseMasterUrls } from '../rpc/masterUrls.js';
import { MasterStateMirror } from './MasterStateMirror.js';
import { connectMaster, type MasterState } from './masterConnection.js';

/**
 * A long-lived client's subscription to the master of a URL list (the agent's): the leader's
 * state mirrored, and, when that master's connection drops and the list names others (standby
 * masters), a subscription to whichever leads now. Only when none answers is the master lost.
 */
export class MasterSession {
  /** Called with the mirrored state after every change (and after a failover's snapshot). */
  onChange: (state: MasterState) => void = () => {};
  /** Called when the master went and no other took over: the session is over. */
  onLost: (message: string) => void = () => {};
  /** Called when another master took over; the state is the new one's. */
  onFailover: (master: RpcEndpointRef) => void = () => {};
  private closed = false;

  private constructor(
    private readonly env: RpcEnv,
    private readonly addresses: readonly string[],
    readonly mirror: MasterStateMirror,
    private current: RpcEndpointRef,
  ) {
    mirror.onChange((s) => {
      if (!this.closed) this.onChange(s);
    });
    mirror.onMasterLost = (address) => void this.failOver(address);
  }

  /** Connects to the master of `masterUrl` (see connectMaster) and subscribes to its state. */
  static async open(
    env: RpcEnv,
    masterUrl: string,
    mirrorName: string,
  ): Promise<{ session: MasterSession; snapshot: MasterState }> {
    const addresses = parseMasterUrls(masterUrl);
    const master = await connectMaster(env, addresses);
    const mirror = new MasterStateMirror();
    env.setupEndpoint(mirrorName, mirror);
    const session = new MasterSession(env, addresses, mirror, master);
    try {
      return { session, snapshot: await mirror.subscribe(master) };
    } catch (err) {
      session.closed = true;
      await env.stopEndpoint(mirror.self);
      throw err;
    }
  }

  get master(): RpcEndpointRef {
    return this.current;
  }

  get state(): MasterState | undefined {
    return this.mirror.state;
  }

  /** Stops the pushes; the session hears nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.mirror.unsubscribe(this.current);
    void this.env.stopEndpoint(this.mirror.self).catch(() => {});
  }

  private async failOver(address: string): Promise<void> {
    if (this.closed) return;
    const lost = `Lost the connection to wick://${address}`;
    if (this.addresses.length < 2) {
      this.closed = true;
      this.onLost(lost);
      return;
    }
    try {
      const next = await connectMaster(
        this.env,
        this.addresses.filter((a) => a !== address),
      );
      if (this.closed) return;
      this.current = next;
      await this.mirror.subscribe(next);
      if (!this.closed) this.onFailover(next);
    } catch (err) {
      if (this.closed) return;
      this.closed = true;
      this.onLost(`${lost}, and no other master took over: ${(err as Error).message}`);
    }
  }
}
