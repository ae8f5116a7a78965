/**
 * A body within its bound is read whole; one past it is refused and the rest drained, so that the
 * client still writing it reads the refusal (the REST server's own test, which failed with
 * `fetch failed: write EPIPE` one time in two before, is where that race was seen). Real http
 * server, real fetch.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { LINGER_BYTES, readBoundedBody } from '../../backend/http/boundedBody.js';

const MAX = 64 * 1024;

async function withServer(run: (url: string) => Promise<void>): Promise<void> {
  const server = http.createServer(async (req, res) => {
    const read = await readBoundedBody(req, MAX);
    res.writeHead(read.ok ? 200 : 413, { connection: 'close' });
    res.end(read.ok ? `got ${read.body.length} bytes: ${read.body.subarray(0, 5)}` : 'too big');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

async function post(url: string, body: RequestInit['body']) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { connection: 'close' },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, text: await res.text() };
}

test('a body within its bound is read whole, announced or streamed', async () => {
  await withServer(async (url) => {
    assert.deepEqual(await post(url, `hello${'x'.repeat(MAX - 5)}`), {
      status: 200,
      text: `got ${MAX} bytes: hello`,
    });
    const streamed = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('hello'));
        c.enqueue(new Uint8Array(100));
        c.close();
      },
    });
    assert.deepEqual(await post(url, streamed), { status: 200, text: 'got 105 bytes: hello' });
  });
});

test('a client sending a body past the bound reads the 413, every time', async () => {
  await withServer(async (url) => {
    // Announced by Content-Length, and streamed without one.
    for (let i = 0; i < 30; i++) {
      assert.deepEqual(await post(url, 'x'.repeat(32 * MAX)), { status: 413, text: 'too big' });
    }
    for (let i = 0; i < 10; i++) {
      const streamed = new ReadableStream<Uint8Array>({
        start(c) {
          for (let k = 0; k < 8; k++) c.enqueue(new Uint8Array(MAX));
          c.close();
        },
      });
      assert.deepEqual(await post(url, streamed), { status: 413, text: 'too big' });
    }
  });
});

test('a body announced past bound and linger together is refused without reading it', async () => {
  await withServer(async (url) => {
    const { hostname, port } = new URL(url);
    const answer = await new Promise<string>((resolve, reject) => {
      const req = http.request({
        host: hostname,
        port,
        method: 'POST',
        headers: { 'content-length': MAX + LINGER_BYTES + 1 },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      // Not one byte of the body is sent: the answer comes from the announcement alone.
      req.flushHeaders();
    });
    assert.equal(answer, '413 too big');
  });
});
