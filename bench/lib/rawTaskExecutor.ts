/**
 * The executor side of the `tasks` benchmark's baseline: a process that connects to a raw driver
 * (rawTaskDriver.ts) over a plain TCP socket, reads tasks as NDJSON lines and answers each at once
 * with a status line, using nothing but JSON.parse and JSON.stringify. No RPC layer, no schema
 * checks, no thread pool: what a task round trip costs at the least with one JSON line each way.
 *
 *   node --import tsx bench/lib/rawTaskExecutor.ts PORT EXECUTOR_ID
 *
 * Prints {"pid"} once connected; exits when the driver closes the socket or stdin closes.
 */
import net from 'node:net';
import { exitWithParent } from './process.js';

interface RawTask {
  taskId: number;
  partition: number;
}

const port = Number(process.argv[2]);
const executorId = process.argv[3] ?? '0';

const socket = net.connect({ host: '127.0.0.1', port }, () => {
  socket.setNoDelay(true);
  socket.write(`${JSON.stringify({ register: executorId })}\n`);
  process.stdout.write(`${JSON.stringify({ pid: process.pid })}\n`);
});
socket.setEncoding('utf8');
let buf = '';
socket.on('data', (chunk: string) => {
  buf += chunk;
  let out = '';
  let nl = buf.indexOf('\n');
  while (nl !== -1) {
    const task = JSON.parse(buf.slice(0, nl)) as RawTask;
    buf = buf.slice(nl + 1);
    out += `${JSON.stringify({ executorId, taskId: task.taskId, state: 'FINISHED', result: null })}\n`;
    nl = buf.indexOf('\n');
  }
  // The answers to what arrived in one chunk leave in one write, as Wick's corked socket does.
  if (out) socket.write(out);
});
socket.on('error', () => process.exit(1));
socket.on('close', () => process.exit(0));
exitWithParent(() => {
  socket.destroy();
});
