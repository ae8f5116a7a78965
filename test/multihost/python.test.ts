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
 * The Python example peers speak plain TCP: they dial and listen without TLS (docs/protocol.md,
 * "Encryption", says how a peer would add it). Across hosts, where Wick's daemons require TLS by
 * default, this cluster runs plain: wick.ssl.enabled=false on the master and the workers. On
 * loopback (test/examples/python-*.test.ts) nothing changes: loopback stays plain.
 */
const PLAIN = { 'wick.ssl.enabled': 'false' };

test('the Python driver and executors run SparkPi across hosts with no address given', {
  skip: hostsUnavailable(),
  timeout: 120_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  // Without the harness's secret: the master makes its own, as on a fresh machine.
  const master = await net
    .host('master')
    .startMaster({ env: { WICK_AUTH_SECRET: '' }, conf: PLAIN });
  const [, secret] = await master.waitForStderr(/^ {4}secret: (\S+)$/m);
  const env = { WICK_AUTH_SECRET: secret as string };
  await net.host('w1').startWorker(master.url, { cores: 1, env, conf: PLAIN });
  await net.host('w2').startWorker(master.url, { cores: 1, env, conf: PLAIN });
  const user = net.host('user');
  const driver = user.spawn(
    'python3',
    [join(repoRoot, 'examples', 'python', 'pi_driver.py'), '--master', master.url, '--slices', '4'],
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
  const master = await net.host('master').startMaster({ conf: PLAIN });
  await net.host('w1').startWorker(master.url, { cores: 1, conf: PLAIN });
  await net.host('w2').startWorker(master.url, { cores: 1, conf: PLAIN });
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
