import { BoundPortsResponse } from '../../protocol/deploy.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import type { SubscribeMasterState, UnsubscribeMasterState } from '../../protocol/state.js';
import type { Master } from '../Master.js';

/** Clients ↔ Master: the state snapshot, subscriptions to its changes, and the bound ports. */

export function receive(m: Master, msg: WireMessage): boolean {
  if (msg.type !== 'UnsubscribeMasterState') return false;
  m.broadcaster.unsubscribe(
    m.rpcEnv.endpointRef((msg as MessageOf<typeof UnsubscribeMasterState>).subscriber),
  );
  return true;
}

export function reply(m: Master, msg: WireMessage): WireMessage | undefined {
  switch (msg.type) {
    case 'RequestMasterState':
      return m.snapshot();
    case 'SubscribeMasterState': {
      // The snapshot flushes pending changes first, so the subscriber misses none and sees none twice.
      const snapshot = m.snapshot();
      m.broadcaster.subscribe(
        m.rpcEnv.endpointRef((msg as MessageOf<typeof SubscribeMasterState>).subscriber),
      );
      return snapshot;
    }
    case 'BoundPortsRequest':
      return BoundPortsResponse({
        rpcEndpointPort: m.rpcEnv.rpcAddress?.port ?? 0,
        webUIPort: m.webUiPort,
      });
    default:
      return undefined;
  }
}
