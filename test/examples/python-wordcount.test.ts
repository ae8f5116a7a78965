/**
 * WordCount in Python on a real `wick local-cluster` (2 workers × 1 core, authenticated):
 * examples/python/wordcount_driver.py schedules a ShuffleMapStage and a ResultStage on Python
 * executors (examples/python/executor.py), which write, serve, fetch and reduce the shuffle
 * themselves. Checked against a plain count of a generated corpus; then with an executor
 * SIGKILLed between the stages (its map outputs are recomputed), and with a corrupt block (the
 * reducer's FetchFailed makes the driver recompute it); and no shuffle file is left once an
 * application ends. Every process of the run carries a marker and none is left afterwards.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eventually } from '../helpers/apps.js';
import {
  assertBuilt,
  killMarked,
  markedProcesses,
  repoRoot,
  startWick,
  type WickProcess,
  waitUntilGone,
} from '../helpers/cli.js';
import { filesUnder, SHUFFLE_DATA } from '../helpers/localFiles.js';
import { seeded } from '../helpers/seeded.js';

const driverScript = join(repoRoot, 'examples', 'python', 'wordcount_driver.py');
const TIMEOUT = { timeout: 120_000 };

const mark = randomUUID();
const root = mkdtempSync(join(tmpdir(), 'wick-test-pywc-'));
const workDir = join(root, 'work');
const localDir = join(root, 'local');
const config = join(root, 'config');
const corpus = join(root, 'corpus.txt');
let lc: WickProcess;
let url: string;
let expected: Map<string, number>;

/** ~40k lines of skewed words (some not ASCII), blank lines and runs of spaces among them. */
function writeCorpus(): Map<string, number> {
  const r = seeded(1913);
  const vocab = ['the', 'of', 'Wick', 'spark', 'é', 'naïve', '日本', 'ß', 'x1', 'shuffle'];
  for (let i = 0; i < 2000; i++) vocab.push(`w${i.toString(36)}`);
  const lines: string[] = [];
  for (let i = 0; i < 40_000; i++) {
    const n = Math.floor(r() * 12);
    const words: string[] = [];
    for (let j = 0; j < n; j++) words.push(vocab[Math.floor(vocab.length * r() ** 3)] as string);
    lines.push(words.join(r() < 0.1 ? '  \t' : ' '));
  }
  const text = `${lines.join('\n')}\n`;
  writeFileSync(corpus, text);
  const counts = new Map<string, number>();
  for (const line of text.split('\n'))
    for (const w of line.split(/\s+/)) if (w) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
}

/** `wick local-cluster`, 2 workers × 1 core, shuffle files under `local`. */
function startCluster(work: string, local: string, conf: string[] = []): WickProcess {
  return startWick(
    [
      ...['local-cluster', '--workers', '2', '--cores', '1', '--port', '0', '--webui-port', '0'],
      ...['--work-dir', work, '--conf', `wick.local.dir=${local}`],
      ...conf.flatMap((c) => ['--conf', c]),
    ],
    { mark, cwd: root, env: { XDG_CONFIG_HOME: config } },
  );
}

before(async () => {
  assertBuilt();
  expected = writeCorpus();
  lc = startCluster(workDir, localDir);
  url = await lc.firstLine();
});

after(async () => {
  lc?.child.kill('SIGTERM');
  await lc?.exited;
  await killMarked(mark);
  assert.deepEqual(markedProcesses(mark), [], 'processes of the run left running');
  rmSync(root, { recursive: true, force: true });
});

interface Driver {
  stdout(): string;
  stderr(): string;
  /** Resolves with stdout's first line that matches. */
  line(re: RegExp): Promise<RegExpExecArray>;
  send(text: string): void;
  exited: Promise<number | null>;
}

function startDriver(args: string[], master = url): Driver {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('WICK_')),
  );
  const child = spawn(
    'python3',
    [
      driverScript,
      '--master',
      master,
      '--input',
      corpus,
      '--partitions',
      '4',
      '--reducers',
      '3',
      '--min-executors',
      '2',
      ...args,
    ],
    { cwd: root, env: { ...env, XDG_CONFIG_HOME: config, WICK_TEST_MARK: mark } },
  );
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    wake();
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    err += s;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      wake();
      resolve(code);
    }),
  );
  return {
    stdout: () => out,
    stderr: () => err,
    exited,
    send: (text) => child.stdin.write(text),
    line: async (re) => {
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (child.exitCode !== null)
          throw new Error(`the driver exited (${child.exitCode}):\n${err}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

function appIdOf(d: Driver): string {
  const m = /Connected to Wick cluster with app ID (app-\S+)/.exec(d.stderr());
  assert.ok(m, `no app id in the driver's log:\n${d.stderr()}`);
  return m[1] as string;
}

/** The driver's answer: the top words it printed and every count it wrote, checked. */
function assertCounts(d: Driver, output: string, code: number | null): void {
  assert.equal(code, 0, `wordcount_driver.py failed:\n${d.stderr()}`);
  const got = new Map<string, number>();
  for (const line of readFileSync(output, 'utf8').split('\n')) {
    if (!line) continue;
    const [w, n] = JSON.parse(line) as [string, number];
    assert.ok(!got.has(w), `${w} counted by one reducer only`);
    got.set(w, n);
  }
  assert.deepEqual(got, expected);
  const top = d
    .stdout()
    .split('\n')
    .filter((l) => /^\S+: \d+$/.test(l));
  assert.equal(top.length, 20, d.stdout());
  const want = [...expected.values()].sort((a, b) => b - a).slice(0, 20);
  assert.deepEqual(
    top.map((l) => Number(l.split(': ')[1])),
    want,
    'the 20 largest counts, most frequent first',
  );
  for (const l of top) {
    const [w, n] = l.split(': ');
    assert.equal(expected.get(w as string), Number(n), l);
  }
}

/** Shuffle data files of an application under the workers' local dirs (its `wick-executor-<appId>-…`). */
const shuffleFilesOf = (appId: string) =>
  filesUnder(localDir, SHUFFLE_DATA).filter((p) => p.includes(`wick-executor-${appId}-`));

/** The executors' stdout files of an application (`<work dir>/<appId>/<execId>/stdout`). */
function executorStdout(appId: string): string {
  const dir = join(workDir, appId);
  return readdirSync(dir)
    .map((e) => {
      try {
        return readFileSync(join(dir, e, 'stdout'), 'utf8');
      } catch {
        return '';
      }
    })
    .join('\n');
}

test(
  'WordCount on Python executors: a map and a reduce stage, the counts of a plain count',
  TIMEOUT,
  async () => {
    const output = join(root, 'counts-plain.jsonl');
    const d = startDriver(['--output', output, '--pause-before-reduce']);
    // Between the stages: the map outputs are on disk, in the application's local dirs.
    // Both executors ran map tasks (the driver waited for both before the stage).
    await d.line(/^map stage done on executors \d+ \d+$/m);
    const appId = appIdOf(d);
    assert.ok(shuffleFilesOf(appId).length >= 1, 'map outputs written under wick.local.dir');
    d.send('\n');
    assertCounts(d, output, await d.exited);
    assert.doesNotMatch(d.stderr(), /Resubmitting|FetchFailed/);
    const executors = executorStdout(appId);
    const finished = (stage: number) =>
      [...executors.matchAll(new RegExp(`Finished task (\\d+)\\.0 in stage ${stage}\\.0`, 'g'))]
        .map((m) => Number(m[1]))
        .sort();
    assert.deepEqual(finished(0), [0, 1, 2, 3], `the 4 map tasks:\n${executors}`);
    assert.deepEqual(finished(1), [0, 1, 2], `the 3 reduce tasks:\n${executors}`);
    // The application is over: its worker removes its local dirs, shuffle files included.
    await eventually(AbortSignal.timeout(30_000), () =>
      shuffleFilesOf(appId).length === 0 ? true : undefined,
    );
  },
);

test(
  'an executor SIGKILLed between the stages: its map outputs are recomputed, the counts are right',
  TIMEOUT,
  async () => {
    const output = join(root, 'counts-killed.jsonl');
    const d = startDriver(['--output', output, '--pause-before-reduce']);
    const m = await d.line(/^map stage done on executors (\d+)/m);
    const appId = appIdOf(d);
    const victim = markedProcesses(mark).find(
      (p) =>
        p.cmdline.includes('executor.py') &&
        p.cmdline.includes(`--executor-id ${m[1]} `) &&
        p.cmdline.includes(appId),
    );
    assert.ok(victim, `executor ${m[1]}'s process`);
    process.kill(victim.pid, 'SIGKILL');
    assert.deepEqual(await waitUntilGone([victim.pid]), []);
    d.send('\n');
    assertCounts(d, output, await d.exited);
    assert.match(
      d.stderr(),
      /Resubmitting ShuffleMapStage 0 \(shuffle 0\): \d of 4 map outputs are missing/,
    );
  },
);

test(
  'a corrupt block: the reducer fails with FetchFailed, the driver recomputes that output',
  TIMEOUT,
  async () => {
    const output = join(root, 'counts-corrupt.jsonl');
    const d = startDriver(['--output', output, '--pause-before-reduce']);
    await d.line(/^map stage done on executors/m);
    const [file] = shuffleFilesOf(appIdOf(d));
    assert.ok(file, 'a map output');
    // One byte changed, the size kept: only the CRC-32 tells.
    const b = readFileSync(file);
    b[0] = b[0] === 0x5b ? 0x7b : 0x5b;
    writeFileSync(file, b);
    d.send('\n');
    assertCounts(d, output, await d.exited);
    assert.match(
      d.stderr(),
      /FetchFailed: Block shuffle_0_\d_\d from executor \d+ \(\S+\) is corrupt: its CRC-32 is \d+, \d+ expected/,
    );
    assert.match(
      d.stderr(),
      /Resubmitting ShuffleMapStage 0 \(shuffle 0\): \d of 4 map outputs are missing/,
    );
  },
);

test(
  'open: on a cluster that runs without authentication, the shuffle servers let the reducers in unproven',
  TIMEOUT,
  async (t) => {
    const open = startCluster(join(root, 'work-open'), join(root, 'local-open'), [
      'wick.authenticate=false',
    ]);
    t.after(async () => {
      open.child.kill('SIGTERM');
      await open.exited;
    });
    const output = join(root, 'counts-open.jsonl');
    const d = startDriver(
      ['--output', output, '--conf', 'wick.authenticate=false'],
      await open.firstLine(),
    );
    assertCounts(d, output, await d.exited);
    assert.match(d.stderr(), /Listening on \S+ \(authentication off/);
  },
);
