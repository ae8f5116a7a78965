import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { MiddlewareHandler } from 'hono';

/**
 * Malformed HTTP gets an answer, not a closed socket: a client (or a proxy in front of the UI)
 * learns what was wrong instead of retrying blind. Two layers: what Node's parser refuses never
 * reaches Hono, and is answered here on the socket; what it lets through but is still not a URL
 * (bad percent-encoding, percent-encoded bytes that are not UTF-8) is refused before any route.
 */

/** The parser's error codes that are not a plain 400, and what each is. */
const STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Content Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/** Why, in words, for the parser's usual codes (llhttp's own reason otherwise). */
const WHY: Record<string, string> = {
  HPE_INVALID_METHOD: 'unknown method',
  HPE_INVALID_URL: 'the request target is not a valid URL (percent-encode any byte outside ASCII)',
  HPE_INVALID_CHUNK_SIZE: 'bad chunked encoding',
  HPE_INVALID_TRANSFER_ENCODING:
    'bad Transfer-Encoding (with Content-Length too, or not ending in chunked)',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'both Content-Length and Transfer-Encoding',
  HPE_INVALID_CONTENT_LENGTH: 'bad Content-Length',
  HPE_INVALID_VERSION: 'unknown HTTP version',
  HPE_HEADER_OVERFLOW: 'the request line and headers are larger than the limit',
};

/**
 * Answers what Node's HTTP parser refuses (the server's 'clientError') with a status, a one-line
 * body and Connection: close, as Node's default does but with a reason. Only on a socket that
 * has written nothing yet: after a response has begun on a keep-alive connection, bytes of a
 * second one would corrupt it, so that socket is closed, as Node does.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { reason?: string }, socket: Duplex) => {
    const written = (socket as Duplex & { bytesWritten?: number }).bytesWritten ?? 0;
    if (err.code === 'ECONNRESET' || !socket.writable || written > 0) {
      socket.destroy();
      return;
    }
    const [status, text] = STATUS[err.code ?? ''] ?? [400, 'Bad Request'];
    const why = WHY[err.code ?? ''] ?? err.reason ?? err.message;
    const body = `${text}: ${why}\n`;
    socket.end(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  });
}

/**
 * Refuses a URL whose path or query does not percent-decode to UTF-8 (`%ZZ`, a lone `%`, `%FF`):
 * Hono would pass such a value on undecoded, and an id with a `%` in it would then be looked up
 * as a name nobody made. One answer for all of them, before any route runs.
 */
export const refuseBadUrls: MiddlewareHandler = async (c, next) => {
  const url = new URL(c.req.url);
  for (const part of [url.pathname, url.search.slice(1).replace(/\+/g, ' ')]) {
    try {
      decodeURIComponent(part);
    } catch {
      return c.text(
        `Bad Request: ${JSON.stringify(part.slice(0, 200))} is not valid percent-encoded UTF-8\n`,
        400,
      );
    }
  }
  await next();
};
