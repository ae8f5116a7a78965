/**
 * A floor for the `master` benchmark: the least a master written directly on node:net could do for
 * the same workers over the same wire protocol. It answers the handshake (wick.hello), the
 * endpoint verifier (CheckExistence), RegisterWorker (RegisteredWorker) and BoundPortsRequest, and
 * records each Heartbeat's time by worker id, all with one JSON.parse per line and no validation,
 * no JSON-RPC library, no inbox. The real master's CPU share is compared with this one's, measured
 * the same way with the same simulators: what is left is what Wick's layers cost, and what this
 * one needs is what one TCP connection per worker costs in Node at all.
 *
 * Prints {"address","pid"} when ready; exits on SIGTERM or when stdin closes.
 */
import net from 'node:net';
import { exitWithParent } from './process.js';

const lastHeartbeat = new Map<string, number>();
const server = net.createServer();
let address = '';

interface Frame {
  id?: number | string;
  method?: string;
  params?: {
    to?: string;
    from?: string;
    message?: { type?: string; id?: string; workerId?: string; worker?: { address: string } };
  };
}

server.on('connection', (socket) => {
  socket.setNoDelay(true);
  // Bytes, not setEncoding('utf8'): a StringDecoder per chunk and string concatenation are more
  // than the least that splitting lines needs. A line split over two reads is rare (heartbeats
  // are small) and is joined by copying.
  let pending: Buffer | undefined;
  socket.on('data', (chunk: Buffer) => {
    let start = 0;
    let nl = chunk.indexOf(0x0a);
    if (pending !== undefined && nl !== -1) {
      handle(socket, Buffer.concat([pending, chunk.subarray(0, nl)]).toString('utf8'));
      pending = undefined;
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    while (nl !== -1) {
      handle(socket, chunk.toString('utf8', start, nl));
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      pending = pending === undefined ? Buffer.from(rest) : Buffer.concat([pending, rest]);
    }
  });
  socket.on('error', () => {});
});

function handle(socket: net.Socket, line: string): void {
  const f = JSON.parse(line) as Frame;
  const msg = f.params?.message;
  switch (f.method) {
    case 'wick.hello':
      reply(socket, f.id, { version: 1, from: address });
      return;
    case 'CheckExistence':
      reply(socket, f.id, { type: 'CheckExistenceResponse', exists: true });
      return;
    case 'BoundPortsRequest':
      reply(socket, f.id, { type: 'BoundPortsResponse', rpcEndpointPort: 0, webUIPort: 0 });
      return;
    case 'Heartbeat':
      lastHeartbeat.set(msg?.workerId as string, Date.now());
      return;
    case 'RegisterWorker':
      lastHeartbeat.set(msg?.id as string, Date.now());
      socket.write(
        `${JSON.stringify({
          jsonrpc: '2.0',
          method: 'RegisteredWorker',
          params: {
            to: 'Worker',
            from: address,
            message: {
              type: 'RegisteredWorker',
              master: { address, name: 'Master' },
              masterWebUiUrl: '',
              masterAddress: address,
            },
          },
        })}\n`,
      );
      return;
    default:
      if (f.id !== undefined) {
        socket.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: f.id, error: { code: -32601, message: 'not in the raw master' } })}\n`,
        );
      }
  }
}

function reply(socket: net.Socket, id: number | string | undefined, result: unknown): void {
  socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
}

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
exitWithParent(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      resolve();
    }),
);
process.stdout.write(`${JSON.stringify({ address, pid: process.pid })}\n`);
