/**
 * A floor for the `master` benchmark: the least a master written directly on node:net could do for
 * the same workers over the same wire protocol. It answers the handshake (wick.hello, and wick.auth:
 * it proves the cluster secret in WICK_AUTH_SECRET and checks the worker's proof, as a master
 * does, when there is one), the
 * endpoint verifier (CheckExistence), RegisterWorker (RegisteredWorker) and BoundPortsRequest, and
 * records each Heartbeat's time by worker id, all with one JSON.parse per line and no validation,
 * no JSON-RPC library, no inbox. The real master's CPU share is compared with this one's, measured
 * the same way with the same simulators: what is left is what Wick's layers cost, and what this
 * one needs is what one TCP connection per worker costs in Node at all.
 *
 * Prints {"address","pid"} when ready; exits on SIGTERM or when stdin closes.
 */
import net from 'node:net';
import { clientProof, newNonce, proofsEqual, serverProof } from '../../backend/rpc/auth.js';
import { exitWithParent } from './process.js';

/** The cluster secret the benchmark gave its processes (auth.ts); none: open. */
const secret = process.env.WICK_AUTH_SECRET || undefined;
/** Per connection while it authenticates: the worker's nonce and our challenge. */
const handshakes = new WeakMap<net.Socket, { nonce: string; challenge: string }>();

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
    nonce?: string;
    proof?: string;
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
    case 'wick.hello': {
      const nonce = f.params?.nonce;
      if (secret === undefined || nonce === undefined) {
        if (secret !== undefined) refuse(socket, f.id, 'authentication is on here');
        else reply(socket, f.id, { version: 1, from: address });
        return;
      }
      const challenge = newNonce();
      handshakes.set(socket, { nonce, challenge });
      const proof = serverProof(secret, nonce, challenge);
      reply(socket, f.id, { version: 1, from: address, challenge, proof });
      return;
    }
    case 'wick.auth': {
      const h = handshakes.get(socket);
      handshakes.delete(socket);
      const proof = f.params?.proof ?? '';
      if (secret === undefined || h === undefined) {
        refuse(socket, f.id, 'wick.auth without a wick.hello with a nonce');
      } else if (!proofsEqual(proof, clientProof(secret, h.nonce, h.challenge))) {
        refuse(socket, f.id, 'authentication failed');
      } else {
        reply(socket, f.id, { ok: true });
      }
      return;
    }
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

function refuse(socket: net.Socket, id: number | string | undefined, message: string): void {
  socket.end(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32005, message } })}\n`);
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
