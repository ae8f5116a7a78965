/**
 * WordCount across hosts: a master and two workers each on a host of their own, `wick submit`
 * of examples/wordcount.ts from a fourth. The map outputs of each executor are fetched by the
 * reducers on the other host (each executor's log says how many of its blocks were remote, and
 * from where), and the answer is the plain count's. The input sits outside every host's private
 * /tmp, at one path all of them read, as a shared file system would hold it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AppSummary } from '../../backend/protocol/state.js';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';

/** Words w0…w39, w<i> 400 − 10·i times (every count distinct: the top 20 has no ties), shuffled. */
function corpus(): { text: string; top: string[] } {
  const words: string[] = [];
  for (let i = 0; i < 40; i++) for (let k = 0; k < 400 - 10 * i; k++) words.push(`w${i}`);
  let seed = 7;
  for (let i = words.length - 1; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = seed % (i + 1);
    [words[i], words[j]] = [words[j] as string, words[i] as string];
  }
  const lines: string[] = [];
  for (let i = 0; i < words.length; i += 7) lines.push(words.slice(i, i + 7).join(' '));
  const top = Array.from({ length: 20 }, (_, i) => `w${i}: ${400 - 10 * i}`);
  return { text: `${lines.join('\n')}\n`, top };
}

test('WordCount submitted from the user’s host shuffles between executors on two other hosts', {
  skip: hostsUnavailable(),
}, async (t) => {
  // /var/tmp, not /tmp: each simulated host mounts a /tmp of its own.
  const dir = await mkdtemp('/var/tmp/wick-wordcount-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { text, top } = corpus();
  const input = join(dir, 'corpus.txt');
  await writeFile(input, text);

  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  const w1 = await net.host('w1').startWorker(master.url, { cores: 1 });
  const w2 = await net.host('w2').startWorker(master.url, { cores: 1 });
  const user = net.host('user');
  const run = await user.wick(
    ['submit', '--master', master.url, 'examples/wordcount.ts', input, '6'],
    {
      timeoutMs: 120_000,
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.stdout.trim().split('\n'), top, run.stdout);

  const appId = /app ID (app-\S+)/.exec(run.stderr)?.[1];
  assert.ok(appId, run.stderr);
  const status = await user.wick(['status', '--json', '--master', master.url, appId]);
  const app = JSON.parse(status.stdout) as AppSummary;
  assert.equal(app.state, 'FINISHED');
  const hostOf = (hostPort: string) => hostPort.split(':')[0];
  const workerHosts = [w1.address, w2.address].map(hostOf);
  assert.deepEqual(
    [...new Set(app.removedExecutors.map((e) => hostOf(e.workerHostPort)))].sort(),
    [...workerHosts].sort(),
  );

  // Blocks written on one host were fetched on the other. (Not by every executor: when one
  // executor ran every map task, its own reducers read them locally, and only the other's cross.)
  const crossings: string[] = [];
  const logs: string[] = [];
  for (const e of app.removedExecutors) {
    const log = await user.wick(['logs', '--master', master.url, `${appId}/${e.id}`, '--stderr']);
    assert.equal(log.code, 0, log.stderr);
    logs.push(log.stdout);
    const other = workerHosts.find((h) => h !== hostOf(e.workerHostPort)) as string;
    for (const m of log.stdout.matchAll(
      /including \d+ local and (\d+) remote blocks from (\S+)/g,
    )) {
      if (Number(m[1]) > 0 && hostOf(m[2] as string) === other)
        crossings.push(`${e.id} ← ${other}`);
    }
  }
  assert.ok(crossings.length > 0, `no executor fetched from the other host:\n${logs.join('\n')}`);
});
