import { MASTER_STATE_PAGE_BYTES } from '../../protocol/bounds.js';
import { BoundPortsRequest, BoundPortsResponse } from '../../protocol/deploy.js';
import {
  formatStateCursor,
  MasterStateResponse,
  parseStateCursor,
  RequestMasterState,
  type StatePosition,
  SubscribeMasterState,
  UnsubscribeMasterState,
} from '../../protocol/state.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/** Clients ↔ Master: the state snapshot, subscriptions to its changes, and the bound ports. */

export function stateHandlers(m: HandlerContext, on: HandlerRegistry): void {
  // These answer at once, without a promise.
  on(RequestMasterState, (msg) =>
    msg.limit === undefined ? snapshot(m) : page(m, msg.after, msg.limit),
  );
  on(SubscribeMasterState, (msg, ctx) => {
    // The snapshot flushes pending changes first, so the subscriber misses none and sees none twice.
    const state = msg.limit === undefined ? snapshot(m) : page(m, undefined, msg.limit);
    // Changes go back over the connection that asked, never to an address the message names.
    m.subscriptions.subscribe(
      ctx.connection
        ? m.rpc.refOver(ctx.connection, msg.subscriber.name)
        : m.rpc.endpointRef(msg.subscriber),
    );
    return state;
  });
  on(UnsubscribeMasterState, (msg) => {
    m.subscriptions.unsubscribe(m.rpc.endpointRef(msg.subscriber));
  });
  on(BoundPortsRequest, () =>
    BoundPortsResponse({
      rpcEndpointPort: m.rpc.rpcAddress?.port ?? 0,
      webUIPort: m.webUiPort,
    }),
  );
}

/** The whole state, with the number of the last change pushed to subscribers. */
export function snapshot(m: HandlerContext) {
  const seq = m.subscriptions.flushedSeq();
  return MasterStateResponse({ ...header(m), ...m.cluster.summaries(), seq });
}

/**
 * One page of the state: the entries after `after`, as they are now. A page lists no entry
 * twice and skips none that stayed in its table; one moved meanwhile (an application that
 * finished) may appear in both of its tables, and a client keeps the later.
 */
export function page(m: HandlerContext, after: string | undefined, limit: number) {
  const seq = m.subscriptions.flushedSeq();
  const { summaries, next } = m.cluster.page(
    after === undefined ? undefined : parseCursor(after),
    limit,
    MASTER_STATE_PAGE_BYTES,
  );
  return MasterStateResponse({
    ...header(m),
    ...summaries,
    seq,
    ...(next ? { next: formatStateCursor(next) } : {}),
  });
}

function header(m: HandlerContext) {
  const masters = m.masters();
  return {
    url: m.masterUrl,
    webUiUrl: m.webUiUrl,
    status: m.status,
    ...(masters ? { masters } : {}),
  };
}

/** The schema's pattern has checked its form already (`w:123`). */
function parseCursor(text: string): StatePosition {
  const at = parseStateCursor(text);
  if (!at) throw new Error(`Bad state cursor ${text}`);
  return at;
}
