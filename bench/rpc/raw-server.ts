/**
 * The baseline server of the rpc benchmark: a hand-rolled NDJSON ping-pong over node:net. It reads
 * JSON-RPC-shaped requests, one per line, and answers each with the same shape of response Wick
 * sends, using nothing but JSON.parse and JSON.stringify. Prints {"port"} when ready.
 */
import net from 'node:net';
import { exitWithParent } from '../lib/process.js';

interface Request {
  jsonrpc: '2.0';
  id: number;
  method: string;
  params: { to: string; from: string; message: { type: string; seq: number } };
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.setEncoding('utf8');
  let buf = '';
  socket.on('data', (chunk: string) => {
    buf += chunk;
    let nl = buf.indexOf('\n');
    while (nl !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const req = JSON.parse(line) as Request;
      const res = {
        jsonrpc: '2.0',
        id: req.id,
        result: { type: 'Pong', seq: req.params.message.seq },
      };
      socket.write(`${JSON.stringify(res)}\n`);
      nl = buf.indexOf('\n');
    }
  });
  socket.on('error', () => socket.destroy());
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as net.AddressInfo;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
exitWithParent(() => new Promise<void>((r) => server.close(() => r())));
