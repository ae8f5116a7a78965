import type { MasterState } from '../../backend/client/masterConnection.js';
import type { RecoveryState } from '../../backend/protocol/common.js';
import { MASTER_ENDPOINT } from '../../backend/protocol/endpoints.js';
import {
  MasterStateEvent,
  MasterStateResponse,
  RequestMasterState,
  SubscribeMasterState,
  UnsubscribeMasterState,
} from '../../backend/protocol/state.js';
import { RpcEndpoint, type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { testProtocol } from './protocol.js';

/** A Master endpoint that answers state requests and subscriptions from a state it is given. */
export class MockMaster extends RpcEndpoint {
  readonly subscribers: RpcEndpointRef[] = [];
  state: Omit<MasterState, 'type'>;

  constructor(status: RecoveryState, url: string) {
    super();
    this.state = {
      url,
      webUiUrl: `http://${url.slice('wick://'.length)}/ui`,
      status,
      workers: [],
      activeApps: [],
      completedApps: [],
      activeDrivers: [],
      completedDrivers: [],
      seq: 0,
    };
    this.on(RequestMasterState, () => MasterStateResponse(this.state));
    this.on(SubscribeMasterState, (m) => {
      this.subscribers.push(this.rpcEnv.endpointRef(m.subscriber));
      return MasterStateResponse(this.state);
    });
    this.on(UnsubscribeMasterState, (m) => {
      const i = this.subscribers.findIndex((s) => s.name === m.subscriber.name);
      if (i >= 0) this.subscribers.splice(i, 1);
    });
  }

  /** Pushes a change to every subscriber, numbered after the last. */
  push(change: Omit<Parameters<typeof MasterStateEvent>[0], 'seq'>): void {
    this.state.seq++;
    if (change.status) this.state.status = change.status;
    for (const s of this.subscribers) s.send(MasterStateEvent({ ...change, seq: this.state.seq }));
  }
}

/** A master's RpcEnv on port 0 with a MockMaster in it. */
export async function startMockMaster(
  status: RecoveryState,
): Promise<{ env: RpcEnv; master: MockMaster; address: string }> {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'mockMaster', port: 0 });
  const master = new MockMaster(status, `wick://${env.address}`);
  env.setupEndpoint(MASTER_ENDPOINT, master);
  return { env, master, address: env.address };
}

export function clientEnvForTest(): Promise<RpcEnv> {
  return RpcEnv.create({ protocol: testProtocol, name: 'testClient', clientMode: true });
}
