import type { Context } from 'hono';
import type { LogFollower } from '../client/LogFollower.js';
import { RequestLogRange } from '../protocol/worker.js';
import { type RpcEndpointRef, RpcError, RpcErrorCode } from '../rpc/index.js';
import { type LogSource, logFields } from '../shared/logSource.js';
import { parseLogRequest } from './logParams.js';
import { type SseChannel, type SseMessage, sseResponse } from './sse.js';
import type { UiServer } from './UiServer.js';

/** Which worker holds a log (`c`: the request, for a worker named in its path); a sentence when none does. */
export type LocateLog = (source: LogSource, c: Context) => RpcEndpointRef | string;

const ASK_TIMEOUT_MS = 30_000;

/**
 * The dashboard's log API, on a master (which asks the worker that ran the executor or driver,
 * over RPC) and on a worker (which asks itself): GET /api/log reads a byte range as JSON (base64
 * data), GET /api/log/follow streams the bytes as written, as Server-Sent Events, until the
 * process has exited or the page goes away. The worker checks every path (resolveLogPath).
 */
export function mountLogApi(
  ui: UiServer,
  follower: () => LogFollower | undefined,
  locate: LocateLog,
  /** Where the routes are: '' for /api/log, `/proxy/:workerId` for the master's proxy of one worker. */
  base = '',
): void {
  ui.app.get(`${base}/api/log`, async (c) => {
    const req = parseLogRequest((n) => c.req.query(n));
    if (typeof req === 'string') return c.text(`${req}\n`, 400);
    const worker = locate(req.source, c);
    if (typeof worker === 'string') return c.text(`${worker}\n`, 404);
    try {
      const r = await worker.ask(
        RequestLogRange({
          ...logFields(req.source, req.stream),
          ...(req.offset !== undefined ? { offset: req.offset } : {}),
          length: req.length,
        }),
        { timeout: ASK_TIMEOUT_MS },
      );
      return c.json({ offset: r.offset, length: r.length, totalSize: r.totalSize, data: r.data });
    } catch (err) {
      return failure(c, err);
    }
  });

  ui.app.get(`${base}/api/log/follow`, async (c) => {
    const req = parseLogRequest((n) => c.req.query(n));
    if (typeof req === 'string') return c.text(`${req}\n`, 400);
    if (req.offset === undefined) return c.text('A follow needs an offset\n', 400);
    const worker = locate(req.source, c);
    if (typeof worker === 'string') return c.text(`${worker}\n`, 404);
    const logs = follower();
    if (!logs) return c.text('The web UI is starting\n', 503);
    // Chunks can arrive before the stream is open: they wait here, in order.
    const early: SseMessage[] = [];
    let channel: SseChannel | undefined;
    const emit = (m: SseMessage) => (channel ? channel.send(m) : early.push(m));
    let ended = false;
    let followId: string;
    try {
      // The worker checks the source first: a bad one is an HTTP error, not an empty stream.
      ({ followId } = await logs.follow(
        worker,
        { source: req.source, stream: req.stream, offset: req.offset },
        {
          chunk: (m) => emit({ event: 'chunk', data: { offset: m.offset, data: m.data } }),
          ended: (totalSize, reason) => {
            ended = true;
            emit({ event: 'end', data: { totalSize, reason } });
            channel?.end();
          },
        },
        ASK_TIMEOUT_MS,
      ));
    } catch (err) {
      return failure(c, err);
    }
    return sseResponse(c, ui.streams, (ch) => {
      channel = ch;
      for (const m of early.splice(0)) ch.send(m);
      if (ended) ch.end();
      // The page went away: the worker stops reading (a no-op when the follow had ended).
      return () => logs.stop(followId);
    });
  });
}

/** An RpcError from the worker as an HTTP status: bad parameters 400, no such log 404, else 502. */
export function failure(c: Context, err: unknown): Response {
  const message = (err as Error).message;
  if (err instanceof RpcError && err.code === RpcErrorCode.InvalidParams) {
    return c.text(`${message}\n`, message.startsWith('No such log') ? 404 : 400);
  }
  return c.text(`The worker did not answer: ${message}\n`, 502);
}
