import type { IncomingMessage } from 'node:http';

/**
 * What a client may still send after its body has been refused: read and dropped, so that the
 * client, still writing, gets to read the refusal. A server that answers and closes while the
 * client writes makes the client fail with EPIPE or a reset, never the 413 (RFC 9112 §9.6, the
 * "lingering close"; seen as `fetch failed: write EPIPE` from Node's own fetch). Past this, or
 * after LINGER_MS, the answer goes out and the connection closes.
 */
export const LINGER_BYTES = 16 * 1024 * 1024;
const LINGER_MS = 5_000;

export type BoundedBody = { ok: true; body: Buffer } | { ok: false };

/**
 * A request's body, read straight from Node's stream, at most `maxBytes` of it: a body announced
 * or streamed past the bound is refused and the rest of it drained as above. Hono's bodyLimit
 * answers at once instead, which is what made an honest oversized request fail on the client.
 */
export function readBoundedBody(incoming: IncomingMessage, maxBytes: number): Promise<BoundedBody> {
  const announced = Number(incoming.headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBytes + LINGER_BYTES) {
    return Promise.resolve({ ok: false });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(announced) && announced > maxBytes;
    let lingering: NodeJS.Timeout | undefined;
    const settle = (result: BoundedBody | Error) => {
      clearTimeout(lingering);
      incoming.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const refuse = () => settle({ ok: false });
    const linger = () => {
      over = true;
      chunks.length = 0;
      lingering ??= setTimeout(refuse, LINGER_MS);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (!over && size > maxBytes) linger();
      if (!over) chunks.push(chunk);
      else if (size > maxBytes + LINGER_BYTES) refuse();
    };
    const onEnd = () => (over ? refuse() : settle({ ok: true, body: Buffer.concat(chunks, size) }));
    const onClose = () => (over ? refuse() : settle(new Error('the client closed the connection')));
    if (over) linger();
    incoming.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
  });
}
