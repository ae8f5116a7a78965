/**
 * The Python examples on a cluster whose every wire is TLS 1.3: `wick local-cluster` with
 * wick.ssl.loopback=true, which puts loopback under the rules of every other address, so that its
 * master, workers and the processes they start serve TLS and refuse plaintext even from this
 * machine. pi_driver.py and wordcount_driver.py, told the same and pinning the master's
 * certificate as docs/protocol.md says, run their jobs on Python executors: the master dials the
 * Python driver, the executors the driver and their worker, the reducers the other executors'
 * shuffle servers, each over TLS (a plaintext peer would have been refused). A driver that pins
 * another fingerprint is refused before it registers, naming both; one that speaks plaintext is
 * told what to do.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  assertBuilt,
  killMarked,
  markedProcesses,
  repoRoot,
  startWick,
  type WickProcess,
} from '../helpers/cli.js';

const pi = join(repoRoot, 'examples', 'python', 'pi_driver.py');
const wordcount = join(repoRoot, 'examples', 'python', 'wordcount_driver.py');
/** A hang guard only: a run takes seconds. */
const TIMEOUT = { timeout: 180_000 };
const TLS = ['--conf', 'wick.ssl.loopback=true'];

const mark = randomUUID();
const root = mkdtempSync(join(tmpdir(), 'wick-pytls-'));
const config = join(root, 'config');
let lc: WickProcess;
let url: string;
/** The fingerprint of the cluster's certificate, as `wick join` prints it. */
let fingerprint: string;

before(async () => {
  assertBuilt();
  lc = startWick(
    [
      ...['local-cluster', '--workers', '2', '--cores', '1', '--port', '0', '--webui-port', '0'],
      ...['--work-dir', join(root, 'work'), '--conf', `wick.local.dir=${join(root, 'local')}`],
      ...TLS,
    ],
    { mark, cwd: root, env: { XDG_CONFIG_HOME: config } },
  );
  url = await lc.firstLine();
  const cert = new X509Certificate(readFileSync(join(config, 'wick', 'cluster-tls.crt')));
  fingerprint = `sha256:${cert.fingerprint256.replaceAll(':', '').toLowerCase()}`;
});

after(async () => {
  lc?.child.kill('SIGTERM');
  await lc?.exited;
  await killMarked(mark);
  assert.deepEqual(markedProcesses(mark), [], 'processes of the run left running');
  rmSync(root, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A Python driver to its end, on the cluster's machine as its user (its XDG_CONFIG_HOME). */
async function run(script: string, args: string[], env: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('WICK_')),
  );
  const child = spawn('python3', [script, '--master', url, ...args], {
    cwd: root,
    env: { ...clean, XDG_CONFIG_HOME: config, WICK_TEST_MARK: mark, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr } satisfies Run;
}

function appIdOf(r: Run): string {
  const m = /Connected to Wick cluster with app ID (app-\S+)/.exec(r.stderr);
  assert.ok(m, `no app id in the driver's log:\n${r.stderr}`);
  return m[1] as string;
}

/** What the executors of `appId` wrote to stdout, and the names of their environments. */
function executorsOf(appId: string): { stdout: string; stderr: string; envNames: string[] }[] {
  const dir = join(root, 'work', appId);
  return readdirSync(dir)
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      const stderr = readFileSync(join(dir, d, 'stderr'), 'utf8');
      const names = /Executor: Environment variables: (.*)$/m.exec(stderr)?.[1] ?? '';
      const stdout = readFileSync(join(dir, d, 'stdout'), 'utf8');
      return { stdout, stderr, envNames: names.split(' ') };
    });
}

test(
  'Pi on Python executors with every connection over TLS, the master pinned',
  TIMEOUT,
  async () => {
    const r = await run(pi, [
      '--slices',
      '4',
      ...TLS,
      '--conf',
      `wick.ssl.fingerprint=${fingerprint}`,
      '--executor-arg=--log-env-names',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const m = /^Pi is roughly (\d+\.\d+)$/m.exec(r.stdout);
    assert.ok(m && Math.abs(Number(m[1]) - Math.PI) < 0.05, r.stdout);
    // The driver served TLS with a certificate of its own (the master dialled it).
    assert.match(
      r.stderr,
      /Serving TLS 1\.3 on 127\.0\.0\.1:\d+ \(certificate sha256:[0-9a-f]{64}, made at start\)/,
    );
    const appId = appIdOf(r);
    const executors = executorsOf(appId);
    const all = executors.map((e) => e.stdout).join('\n');
    const finished = [...all.matchAll(/Finished task (\d+)\.\d+ in stage 0\.0/g)].map((x) =>
      Number(x[1]),
    );
    assert.deepEqual(finished.sort(), [0, 1, 2, 3], all);
    // Its executors were told to encrypt loopback by the driver, and the master's fingerprint by
    // their worker, as Wick's own are.
    for (const e of executors.filter((x) => x.stdout.includes('Registered with driver'))) {
      assert.ok(e.envNames.includes('WICK_SSL_LOOPBACK'), e.envNames.join(' '));
    }
  },
);

test(
  'WordCount on Python executors: the shuffle is fetched over TLS between executors',
  TIMEOUT,
  async () => {
    // w0 once, w1 twice, … w29 30 times, shuffled: the top 20 are w29 … w10, no ties.
    const words: string[] = [];
    for (let i = 0; i < 30; i++) for (let j = 0; j <= i; j++) words.push(`w${i}`);
    words.sort(() => Math.random() - 0.5);
    const input = join(root, 'words.txt');
    const lines: string[] = [];
    for (let i = 0; i < words.length; i += 7) lines.push(words.slice(i, i + 7).join(' '));
    writeFileSync(input, `${lines.join('\n')}\n`);
    const r = await run(wordcount, [
      ...['--input', input, '--partitions', '4', '--reducers', '3', '--min-executors', '2'],
      ...TLS,
      ...['--conf', `wick.ssl.fingerprint=${fingerprint}`],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const top = r.stdout.split('\n').filter((l) => /^\S+: \d+$/.test(l));
    assert.deepEqual(
      top,
      Array.from({ length: 20 }, (_, k) => `w${29 - k}: ${30 - k}`),
      r.stdout,
    );
    // Each executor that ran served its blocks over TLS (and refused plaintext: the counts above
    // came through it).
    const ran = executorsOf(appIdOf(r)).filter((e) => e.stdout.includes('Registered with driver'));
    assert.ok(ran.length >= 2, `executors that ran: ${ran.length}`);
    for (const e of ran) {
      assert.match(
        e.stderr,
        /Serving TLS 1\.3 on \S+ \(certificate sha256:[0-9a-f]{64}, made at start\)/,
      );
    }
  },
);

test(
  'a Python driver that pins another fingerprint is refused before it registers, naming both',
  TIMEOUT,
  async () => {
    const wrong = `sha256:${'cd'.repeat(32)}`;
    const r = await run(pi, ['--slices', '1', ...TLS, '--conf', `wick.ssl.fingerprint=${wrong}`]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(
      r.stderr.includes(
        `The master at ${url.replace(/\/$/, '')} presented the certificate ${fingerprint}, but this process pins ${wrong}`,
      ),
      r.stderr,
    );
    assert.doesNotMatch(r.stderr, /Connected to Wick cluster/);
  },
);

test(
  'a Python driver that speaks plaintext to the TLS cluster is told what to do',
  TIMEOUT,
  async () => {
    const r = await run(pi, ['--slices', '1']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /requires TLS 1\.3: .*docs\/protocol\.md, "Encryption"\. The certificate to pin: sha256:[0-9a-f]{64}/,
    );
    assert.doesNotMatch(r.stderr, /Connected to Wick cluster/);
  },
);
