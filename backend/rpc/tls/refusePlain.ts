import type net from 'node:net';
import { RpcErrorCode } from '../../protocol/errors.js';

/**
 * The answer to a plaintext peer on a port that requires TLS: one JSON-RPC error under the id of
 * its first frame (its wick.hello, when it is a Wick peer with wick.ssl.enabled=false or an older
 * one), so that it fails with this sentence rather than a bare hang-up, then the connection ends.
 */
export function refusePlain(
  socket: net.Socket,
  firstLine: string,
  address: string,
  fingerprint: string,
): void {
  let id: unknown = null;
  try {
    const frame = JSON.parse(firstLine) as { id?: unknown };
    if (typeof frame.id === 'number' || typeof frame.id === 'string') id = frame.id;
  } catch {
    // Not JSON: answered under id null.
  }
  const message = `wick://${address} requires TLS 1.3: it listens on an address other than loopback and wick.ssl.enabled is on. A Wick peer uses TLS by itself unless it runs with wick.ssl.enabled=false (set the same on both sides); a peer of another language: docs/protocol.md, "Encryption". The certificate to pin: ${fingerprint}`;
  const reply = { jsonrpc: '2.0', id, error: { code: RpcErrorCode.AuthenticationFailed, message } };
  socket.end(`${JSON.stringify(reply)}\n`);
  setTimeout(() => socket.destroy(), 1_000).unref();
}
