/**
 * textFile of a shipped file across hosts: the app and its words.txt exist only in the user's
 * host's own /tmp, `wick submit --files words.txt` runs there, and the app reads
 * `wc.textFile('words.txt')` — by the name it shipped the file under, as WickFiles.get takes it —
 * and a file it added itself with wc.addFile, by the path it added it from. Executors on two
 * other hosts, which never saw either path, read their own fetched copies (the driver sends an
 * added file by its name: docs/protocol.md, "Files"). Before, the driver sent its own absolute
 * path and every task failed with "does not exist on …, ship it with --files".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsUnavailable, startHosts, wickInOwnTmp } from '../helpers/hosts.js';

const APP: Record<string, string> = {
  'app.ts': `
import { writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { resolve } from 'node:path';
import { WickContext } from 'wick';

/** The address of the host a task runs on (each simulated host has one, on e0). */
function where(): string {
  return networkInterfaces().e0?.find((a) => a.family === 'IPv4')?.address ?? '?';
}

const wc = await WickContext.create({ appName: 'textFile by name' });
writeFileSync('more.txt', 'x y\\nz\\n');
await wc.addFile('more.txt');
const words = (file: string) =>
  wc
    .textFile(file, 4)
    .flatMap((line: string) => line.split(' ').map((w) => \`\${w}@\${where()}\`))
    .collect();
// The second worker's executors may register after the first jobs have run: they run again
// (each answer printed) until tasks have run on two hosts, or for 30 s.
const hosts = new Set<string>();
const until = Date.now() + 30_000;
do {
  for (const [label, file] of [['shipped', 'words.txt'], ['added', resolve('more.txt')]]) {
    const rows = await words(file);
    console.log(\`RESULT \${label} \${rows.map((r) => r.split('@')[0]).sort().join(' ')}\`);
    for (const r of rows) hosts.add(r.split('@')[1]);
  }
  if (hosts.size < 2) await new Promise((r) => setTimeout(r, 100));
} while (hosts.size < 2 && Date.now() < until);
console.log(\`HOSTS \${[...hosts].sort().join(' ')}\`);
await wc.stop();
`,
  'words.txt': 'a b\nc d e\nf\ng h\n',
};

const EXPECTED = ['RESULT shipped a b c d e f g h', 'RESULT added x y z'];

test('textFile by the shipped name (--files words.txt) and of a wc.addFile path, on hosts that never saw either', {
  skip: hostsUnavailable(),
  timeout: 180_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  const w1 = await net.host('w1').startWorker(master.url, { cores: 2 });
  const w2 = await net.host('w2').startWorker(master.url, { cores: 2 });
  const submit = wickInOwnTmp(net.host('user'), APP, [
    'submit',
    '--master',
    master.url,
    '--executor-cores',
    '1',
    '--executor-memory',
    '128m',
    '--files',
    'words.txt',
    'app.ts',
  ]);
  const end = await submit.closed;
  assert.equal(end.code, 0, `${submit.stderr}\n${submit.stdout}`);
  const results = submit.stdout.split('\n').filter((l) => l.startsWith('RESULT '));
  assert.deepEqual(results.slice(0, 2), EXPECTED, submit.stdout);
  for (const [i, line] of results.entries())
    assert.equal(line, EXPECTED[i % 2], 'every run of the jobs gives the answer');
  const hosts = /HOSTS (.*)/.exec(submit.stdout)?.[1]?.split(' ');
  assert.deepEqual(hosts, [w1.address, w2.address].map((a) => a.split(':')[0]).sort());
});
