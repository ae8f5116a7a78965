import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';

/** One Server-Sent Event: its name and its data, sent as JSON. */
export interface SseMessage {
  event: string;
  data: unknown;
}

/** Lets a producer end its own stream (after a last message), or learn that the client left. */
export interface SseChannel {
  send(message: SseMessage): void;
  end(): void;
}

/**
 * Answers with an event stream fed by `start`, which gets a channel and returns its cleanup. The
 * producer pushes (nothing is polled); messages are queued and written in order, each awaited, so
 * a slow client slows only its own queue. The cleanup runs once, whether the client left, the
 * producer ended the stream, or the server is stopping (see closeAll).
 */
export function sseResponse(
  c: Context,
  streams: Set<SseChannel>,
  start: (channel: SseChannel) => () => void,
): Response {
  const res = streamSSE(c, async (stream) => {
    const queue: SseMessage[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const channel: SseChannel = {
      send(message) {
        if (ended) return;
        queue.push(message);
        wake?.();
      },
      end() {
        ended = true;
        wake?.();
      },
    };
    streams.add(channel);
    stream.onAbort(() => channel.end());
    const cleanup = start(channel);
    try {
      for (;;) {
        const next = queue.shift();
        if (next) {
          await stream.writeSSE({ event: next.event, data: JSON.stringify(next.data) });
          continue;
        }
        if (ended || stream.aborted) break;
        await new Promise<void>((r) => {
          wake = r;
        });
        wake = undefined;
      }
    } finally {
      streams.delete(channel);
      cleanup();
    }
  });
  // no-transform: a proxy that compresses (code-server's /proxy/PORT/, through which Open Web UI
  // opens this page in a browser VS Code, runs express's `compression`) would otherwise hold the
  // events in its gzip buffer, and the page would wait for its first snapshot for ever.
  res.headers.set('Cache-Control', SSE_CACHE_CONTROL);
  return res;
}

/** What an event stream tells caches and proxies: neither keep it nor transform (compress) it. */
export const SSE_CACHE_CONTROL = 'no-cache, no-transform';

/** Ends every open stream (the server is stopping). */
export function closeAll(streams: Set<SseChannel>): void {
  for (const s of [...streams]) s.end();
}
