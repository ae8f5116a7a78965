// The executor of the `logs` benchmark: writes TOTAL bytes to its stdout in blocks of BLOCK bytes,
// as fast as it can (RATE 0) or paced at RATE MB/s, once the benchmark says go. Plain JavaScript:
// the worker runs it with node alone, in a directory where tsx cannot be found.
//
//   node logWriter.mjs TOTAL BLOCK RATE CONTROL_PORT
//
// Each block ends with a trailer " <wall-clock ms, 17 chars>\n": the time (performance.timeOrigin +
// performance.now()) just before the block was written, which the follower compares with its own
// clock when the block's last byte reaches it. The rest of a block is printable filler that differs
// from block to block. When done, it sends the benchmark {"bytes","sha256","blocks","ms"} over the
// control connection (on 127.0.0.1:CONTROL_PORT, where it first waits for "go") and exits.
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import net from 'node:net';

const [total, block, rate, port] = process.argv.slice(2).map(Number);
if (![total, block, rate, port].every(Number.isFinite) || block < 64) {
  throw new Error('usage: logWriter.mjs TOTAL BLOCK RATE CONTROL_PORT');
}

const TRAILER = 19; // " " + 17 + "\n"
const FILLER_BYTES = 1024 * 1024;
const filler = Buffer.alloc(FILLER_BYTES + block);
for (let i = 0; i < filler.length; i++) filler[i] = 33 + ((i * 7919 + (i >> 7)) % 94);

const socket = net.connect({ host: '127.0.0.1', port });
await new Promise((resolve, reject) => {
  socket.once('error', reject);
  socket.once('data', resolve);
});

const hash = createHash('sha256');
const buf = Buffer.alloc(block);
const blocks = Math.ceil(total / block);
const t0 = performance.now();
let written = 0;
for (let k = 0; k < blocks; k++) {
  if (rate > 0) {
    const due = t0 + (written / (rate * 1e6)) * 1000;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  }
  const size = Math.min(block, total - written);
  const start = (k * 4099) % FILLER_BYTES;
  filler.copy(buf, 0, start, start + size);
  const stamp = (performance.timeOrigin + performance.now()).toFixed(3).padStart(17, '0');
  if (size >= TRAILER) buf.write(` ${stamp}\n`, size - TRAILER, 'latin1');
  const out = buf.subarray(0, size);
  let off = 0;
  while (off < size) off += writeSync(1, out, off, size - off);
  hash.update(out);
  written += size;
}
const ms = performance.now() - t0;
socket.end(`${JSON.stringify({ bytes: written, sha256: hash.digest('hex'), blocks, ms })}\n`);
