/**
 * Malformed HTTP gets an answer, not a closed socket (issue 17, finding 6): raw requests over a
 * socket to a real master's and worker's web UI, with authentication on, each answered with its
 * status, a one-line reason and Connection: close; the UI serves the next request as before.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';

checkNothingLeftRunning();

const ENV = { WICK_AUTH_SECRET: 'bad-requests-test-secret-01' };

/** Writes `request` and resolves with everything the server sent until it closed the socket. */
function raw(url: string, request: Buffer | string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(request);
  });
}

const end = 'Host: x\r\nConnection: close\r\n\r\n';
const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

/** Each kind of malformed request, with the status and the reason it must get. */
const CASES: [string, Buffer | string, number, RegExp][] = [
  ['an unknown method', `FOO / HTTP/1.1\r\n${end}`, 400, /unknown method/],
  ['a method in lower case', `get / HTTP/1.1\r\n${end}`, 400, /unknown method/],
  [
    'raw bytes that are not UTF-8 in the path',
    bytes('GET /log', [0xff, 0xfe], ` HTTP/1.1\r\n${end}`),
    400,
    /not a valid URL/,
  ],
  [
    'a raw byte above ASCII in the path',
    bytes('GET /', [0xc3, 0xa9], ` HTTP/1.1\r\n${end}`),
    400,
    /not a valid URL/,
  ],
  ['a space in the path', `GET /a b HTTP/1.1\r\n${end}`, 400, /Bad Request/],
  ['an unknown HTTP version', `GET / HTTP/9.9\r\n${end}`, 400, /unknown HTTP version/],
  [
    'bad percent-encoding in the path',
    `GET /proxy/%ZZ/json HTTP/1.1\r\n${end}`,
    400,
    /"\/proxy\/%ZZ\/json" is not valid percent-encoded UTF-8/,
  ],
  [
    'a lone % in the query',
    `GET /log?appId=app-1%&executorId=0 HTTP/1.1\r\n${end}`,
    400,
    /is not valid percent-encoded UTF-8/,
  ],
  [
    'percent-encoded bytes that are not UTF-8',
    `GET /api/log?driverId=%FF%FE HTTP/1.1\r\n${end}`,
    400,
    /"driverId=%FF%FE" is not valid percent-encoded UTF-8/,
  ],
  [
    'bad chunked encoding',
    `POST /api/kill HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n`,
    400,
    /bad chunked encoding/,
  ],
  [
    'both Content-Length and Transfer-Encoding',
    `POST /api/kill HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    400,
    /Transfer-Encoding|Content-Length/,
  ],
  [
    'a bad Content-Length',
    `POST /api/kill HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n`,
    400,
    /Content-Length/,
  ],
  [
    'headers larger than the limit',
    `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    431,
    /Request Header Fields Too Large/,
  ],
];

test('each kind of malformed request gets its status and reason, and the web UI carries on', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { env: ENV });
  const worker = await startWorker(t, master.url, { cores: 1, env: ENV });
  for (const [ui, base] of [
    ['master', master.webUiUrl],
    ['worker', worker.webUiUrl],
  ] as const) {
    for (const [what, request, status, reason] of CASES) {
      const answer = await raw(base, request);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      assert.match(
        head,
        new RegExp(`^HTTP/1\\.1 ${status} `),
        `${ui}, ${what}: ${answer.slice(0, 300)}`,
      );
      assert.match(head, /\r\nconnection: close/i, `${ui}, ${what}`);
      assert.match(body, reason, `${ui}, ${what}`);
      assert.ok(body.length < 300, `${ui}, ${what}: a short answer`);
    }
    // Still serving, to anyone who asks properly.
    const health = await fetch(`${base}/health`);
    assert.deepEqual([health.status, await health.text()], [200, 'ok\n'], ui);
  }
  assert.ok(master.isRunning && worker.isRunning);
});
