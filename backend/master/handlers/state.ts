import { BoundPortsRequest, BoundPortsResponse } from '../../protocol/deploy.js';
import {
  MasterStateResponse,
  RequestMasterState,
  SubscribeMasterState,
  UnsubscribeMasterState,
} from '../../protocol/state.js';
import type { HandlerRegistry, Master } from '../Master.js';

/** Clients ↔ Master: the state snapshot, subscriptions to its changes, and the bound ports. */

export function stateHandlers(m: Master, on: HandlerRegistry): void {
  // These answer at once, without a promise.
  on(RequestMasterState, () => snapshot(m));
  on(SubscribeMasterState, (msg, ctx) => {
    // The snapshot flushes pending changes first, so the subscriber misses none and sees none twice.
    const state = snapshot(m);
    // Changes go back over the connection that asked, never to an address the message names.
    m.broadcaster.subscribe(
      ctx.connection
        ? m.rpcEnv.refOver(ctx.connection, msg.subscriber.name)
        : m.rpcEnv.endpointRef(msg.subscriber),
    );
    return state;
  });
  on(UnsubscribeMasterState, (msg) => {
    m.broadcaster.unsubscribe(m.rpcEnv.endpointRef(msg.subscriber));
  });
  on(BoundPortsRequest, () =>
    BoundPortsResponse({
      rpcEndpointPort: m.rpcEnv.rpcAddress?.port ?? 0,
      webUIPort: m.webUiPort,
    }),
  );
}

/** The whole state, with the number of the last change pushed to subscribers. */
export function snapshot(m: Master) {
  m.broadcaster.flush();
  const masters = m.masters();
  return MasterStateResponse({
    url: m.masterUrl,
    webUiUrl: m.webUiUrl,
    status: m.state,
    ...m.cluster.summaries(),
    ...(masters ? { masters } : {}),
    seq: m.broadcaster.seq,
  });
}
