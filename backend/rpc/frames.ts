import type { JSONRPCID, JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { RpcErrorCode } from '../protocol/errors.js';
import { type MessageCatalog, previewJSON } from '../protocol/registry.js';
import { parseSplicedFrame } from './splicedFrames.js';

/** What one received line is, once checked against JSON-RPC 2.0's shapes. */
export type Frame =
  | { kind: 'request'; request: JSONRPCRequest }
  | { kind: 'response'; response: JSONRPCResponse }
  | { kind: 'bad'; id: JSONRPCID; code: number; message: string };

/**
 * Parses and sorts one line (pure, so every malformed case can be tested without a socket):
 * a request or notification, a response, or a bad frame with the JSON-RPC error to answer it
 * with and the id to answer under (null when the id itself cannot be trusted). `peer` names the
 * sender in the message of a malformed error reply.
 */
export function classifyFrame(text: string, peer: string, protocol: MessageCatalog): Frame {
  let value: unknown;
  try {
    value =
      parseSplicedFrame(text, (method, field) => isBase64Field(protocol, method, field)) ??
      JSON.parse(text);
  } catch (err) {
    return bad(null, RpcErrorCode.ParseError, `Parse error: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null) {
    return bad(
      null,
      RpcErrorCode.InvalidRequest,
      `Invalid Request: expected a JSON-RPC 2.0 object, got ${text.slice(0, 80)}`,
    );
  }
  if (Array.isArray(value)) {
    return bad(
      null,
      RpcErrorCode.InvalidRequest,
      'Invalid Request: batches are not supported; send one JSON-RPC message per line',
    );
  }
  const msg = value as Record<string, unknown>;
  const id = msg.id;
  const idOk =
    id === undefined ||
    id === null ||
    typeof id === 'string' ||
    (typeof id === 'number' && Number.isFinite(id));
  const replyId = idOk && id !== undefined ? (id as JSONRPCID) : null;
  if (msg.jsonrpc !== '2.0') {
    return bad(replyId, RpcErrorCode.InvalidRequest, 'Invalid Request: "jsonrpc" must be "2.0"');
  }
  if ('method' in msg) {
    const params = msg.params;
    if (
      typeof msg.method !== 'string' ||
      !idOk ||
      (params !== undefined && (typeof params !== 'object' || params === null))
    ) {
      return bad(
        replyId,
        RpcErrorCode.InvalidRequest,
        'Invalid Request: needs a string "method", an optional string or number "id", and "params" as an object or array',
      );
    }
    return { kind: 'request', request: msg as unknown as JSONRPCRequest };
  }
  if (('result' in msg || 'error' in msg) && id !== undefined && idOk) {
    const e = msg.error as Record<string, unknown> | undefined;
    if (
      e !== undefined &&
      (typeof e !== 'object' ||
        e === null ||
        typeof e.code !== 'number' ||
        typeof e.message !== 'string')
    ) {
      msg.error = {
        code: RpcErrorCode.InvalidRequest,
        message: `Malformed error reply from ${peer}: ${previewJSON(e, 200)}`,
      };
    } else if (e === undefined && msg.result === undefined) {
      msg.result = null;
    }
    return { kind: 'response', response: msg as unknown as JSONRPCResponse };
  }
  return bad(
    replyId,
    RpcErrorCode.InvalidRequest,
    'Invalid Request: neither a request ("method") nor a response ("result" or "error" with "id")',
  );
}

/** Only a base64 field may skip JSON.parse: validation decodes it, which rejects what JSON would. */
function isBase64Field(protocol: MessageCatalog, method: string, field: string): boolean {
  return protocol.get(method)?.base64.includes(field) === true;
}

function bad(id: JSONRPCID, code: number, message: string): Frame {
  return { kind: 'bad', id, code, message };
}

/** The id at the head of a frame as Wick writes it: {"jsonrpc":"2.0","id":…,"method"… */
const OVERSIZE_ID =
  /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(\d{1,15}|"[^"\\]{0,200}")\s*,\s*"(method|result|error)"/;

/**
 * What the first bytes of a frame too large to read say about it. Wick writes "jsonrpc" and "id"
 * first, so the id is usually there: a request can then get its error under its own id, and a
 * reply can fail the ask it answers, instead of either side waiting in vain.
 */
export function oversizeFrame(head: string): { id: JSONRPCID; isReply: boolean } {
  const m = OVERSIZE_ID.exec(head);
  const id = m ? (JSON.parse(m[1] as string) as JSONRPCID) : null;
  return { id, isReply: id !== null && m?.[2] !== 'method' };
}
