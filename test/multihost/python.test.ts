/**
 * The Python example across hosts: pi_driver.py on the user's host, its executors (executor.py)
 * launched by workers on two other hosts, with no address given: the driver listens on its
 * address on the route to the master, which the executors reach. Authenticated as an operator
 * would: the master generates the cluster secret on its host and prints the line that joins a
 * worker; the workers and the driver get the secret from it, the executors only their
 * application's key.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/cli.js';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';

/**
 * Across hosts every wire is TLS 1.3 (wick.ssl.enabled, the default): the Python peers dial and
 * serve it as docs/protocol.md, "Encryption", says (examples/python/wick_tls.py), and the driver
 * pins the master's certificate with the fingerprint its join line carries, as the workers do.
 */
const PIN = /wick\.ssl\.fingerprint=(sha256:[0-9a-f]{64})/;

test('the Python driver and executors run SparkPi across hosts with no address given', {
  skip: hostsUnavailable(),
  timeout: 120_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  // Without the harness's secret: the master makes its own, as on a fresh machine.
  const master = await net.host('master').startMaster({ env: { WICK_AUTH_SECRET: '' } });
  const [, secret] = await master.waitForStderr(/^ {4}secret: (\S+)$/m);
  const [, fingerprint] = await master.waitForStderr(PIN);
  const env = { WICK_AUTH_SECRET: secret as string };
  const conf = { 'wick.ssl.fingerprint': fingerprint as string };
  await net.host('w1').startWorker(master.url, { cores: 1, env, conf });
  await net.host('w2').startWorker(master.url, { cores: 1, env, conf });
  const user = net.host('user');
  const driver = user.spawn(
    'python3',
    [
      join(repoRoot, 'examples', 'python', 'pi_driver.py'),
      ...['--master', master.url, '--slices', '4'],
      ...['--conf', `wick.ssl.fingerprint=${fingerprint}`],
    ],
    { env },
  );
  const end = await driver.closed;
  assert.equal(end.code, 0, driver.stderr);
  assert.match(driver.stdout, /Pi is roughly 3\.1/);
  assert.match(
    driver.stderr,
    new RegExp(
      `Listening on ${user.address.replaceAll('.', '\\.')}:\\d+ \\(authentication on: cluster secret from WICK_AUTH_SECRET\\)`,
    ),
  );
  // Not on loopback: the driver serves TLS, as the master that dials it requires.
  assert.match(
    driver.stderr,
    /Serving TLS 1\.3 on \S+ \(certificate sha256:[0-9a-f]{64}, made at start\)/,
  );
});

test('Python WordCount across hosts: map outputs on two hosts, each reducer fetches from both', {
  skip: hostsUnavailable(),
  timeout: 120_000,
}, async (t) => {
  // Every host has its own /tmp; this repository's folder is what they share, as hosts share a
  // mount that textFile reads (Spark's HDFS): the input and the driver's output go there.
  mkdirSync(join(repoRoot, '.wick-test'), { recursive: true });
  const dir = mkdtempSync(join(repoRoot, '.wick-test', 'mh-pywc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const corpus = join(dir, 'corpus.txt');
  const words = [
    'spark',
    'wick',
    'shuffle',
    'é',
    '日本',
    ...Array.from({ length: 300 }, (_, i) => `w${i}`),
  ];
  const lines = Array.from({ length: 20_000 }, (_, i) =>
    Array.from({ length: i % 9 }, (_, j) => words[(i * 7 + j * j * 13) % words.length]).join(' '),
  );
  writeFileSync(corpus, `${lines.join('\n')}\n`);
  const want = new Map<string, number>();
  for (const l of lines) for (const w of l.split(/\s+/)) if (w) want.set(w, (want.get(w) ?? 0) + 1);

  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  await net.host('w1').startWorker(master.url, { cores: 1 });
  await net.host('w2').startWorker(master.url, { cores: 1 });
  const output = join(dir, 'counts.jsonl');
  const driver = net
    .host('user')
    .spawn('python3', [
      join(repoRoot, 'examples', 'python', 'wordcount_driver.py'),
      '--master',
      master.url,
      '--input',
      corpus,
      '--partitions',
      '4',
      '--reducers',
      '2',
      '--output',
      output,
      '--min-executors',
      '2',
    ]);
  // The master unpinned here: its certificate is proved by the handshake, whose proofs cover it.
  const end = await driver.closed;
  assert.equal(end.code, 0, driver.stderr);
  const got = new Map(
    readFileSync(output, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as [string, number]),
  );
  assert.deepEqual(got, want);
  // The map outputs lay on both workers' hosts, so every reducer fetched from another host.
  const done = /ShuffleMapStage 0 \(shuffle 0\) done: map outputs of executors (.*)$/m.exec(
    driver.stderr,
  );
  assert.ok(done, driver.stderr);
  const hosts = [...(done[1] as string).matchAll(/ at ([^:,\s]+):\d+/g)].map((m) => m[1]).sort();
  assert.deepEqual(hosts, [net.host('w1').address, net.host('w2').address].sort(), done[0]);
});
