// Baseline (a) of bench/wordcount.bench.ts: a hand-written word count of a file in one Node
// process, one thread: read in 1 MiB chunks, split on whitespace, count in a Map, the 20 most
// frequent. Prints {"top": [[word, count], …], "distinct": n} on stdout.
import { openSync, readSync } from 'node:fs';

const file = process.argv[2];
const fd = openSync(file, 'r');
const buf = Buffer.alloc(1 << 20);
const counts = new Map();
let carry = '';
for (;;) {
  const n = readSync(fd, buf, 0, buf.length, null);
  if (n === 0) break;
  const text = carry + buf.toString('utf8', 0, n);
  // The last word may go on in the next chunk.
  const cut = Math.max(text.lastIndexOf(' '), text.lastIndexOf('\n'));
  carry = text.slice(cut + 1);
  for (const w of text.slice(0, cut + 1).split(/\s+/)) {
    if (w.length > 0) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
}
if (carry.length > 0) counts.set(carry, (counts.get(carry) ?? 0) + 1);
const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 20);
process.stdout.write(`${JSON.stringify({ top, distinct: counts.size })}\n`);
