import {
  AppStatusApiResponse,
  MAX_API_BODY_BYTES,
  RequestAppStatusApi,
} from '../../protocol/client.js';
import { RpcError, RpcErrorCode } from '../../protocol/errors.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/**
 * Clients → Master: `/api/v1` over RPC (RequestAppStatusApi), for a client that cannot reach the
 * web UI — the VS Code panel asks through its agent, whose connection is authenticated already
 * (the router checks that the sender plays the client role, as for every message). The web UI's
 * own routes answer, in this process, so both hosts of the dashboard read one shape.
 */
export function appStatusApiHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(RequestAppStatusApi, async ({ path }) => {
    const { status, body } = await m.apiV1(path);
    const bytes = Buffer.byteLength(body);
    if (bytes > MAX_API_BODY_BYTES) {
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        `/api/v1${path} is ${bytes} bytes, more than ${MAX_API_BODY_BYTES} (MAX_API_BODY_BYTES): ask a smaller page (taskList's length)`,
      );
    }
    return AppStatusApiResponse({ status, body });
  });
}
