/**
 * Spark's console progress bar in a real terminal: `wick submit` of SparkPi on a pseudo-terminal
 * (util-linux's `script`) draws `[Stage 0:===>   (done + running) / total]` on stderr while its
 * stage runs, clears it, and the application's own line comes out whole; in a pipe, or with
 * wick.ui.showConsoleProgress=false, nothing of it is written. The same in cluster mode (the
 * driver on a worker, `wick submit --deploy-mode cluster`, which waits on a local cluster): the
 * bar comes from the progress the master pushes, and the driver's line followed here is whole.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { assertBuilt, repoRoot, startWick, wickBin } from '../helpers/cli.js';

const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;

/** Runs `wick args` on a pseudo-terminal of 80 columns; what the terminal got. */
function onTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, wickBin, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    env: { ...process.env, COLUMNS: '80', WICK_LOG_LEVEL: 'WARN' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    screen += d;
  });
  // Bounded: `script` and what runs on it go if the run hangs.
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, screen });
    }),
  );
}

/** Runs `wick args` with stdout and stderr piped (no terminal), bounded as `onTerminal` is. */
async function piped(args: string[]) {
  const child = startWick(args, { env: { WICK_LOG_LEVEL: 'WARN' } });
  child.child.stdin?.end();
  const guard = setTimeout(() => child.child.kill('SIGKILL'), 150_000);
  const { code } = await child.exited;
  clearTimeout(guard);
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/**
 * The bars a terminal got: each the terminal's width, tasks done only going up; and the answer's
 * line, whose last part (after the bar's clearing: \r, blanks, \r) is whole. That line.
 */
function assertBarsThenAnswer(screen: string): string {
  const bars = [...screen.matchAll(/\r(\[Stage 0:[= >]*\((\d+) \+ (\d+)\) \/ 3000\])\r/g)];
  assert.ok(bars.length > 0, `no progress bar drawn:\n${screen.slice(-2000)}`);
  for (const b of bars) assert.equal(b[1]?.length, 79, `a bar of the terminal's width: ${b[1]}`);
  const done = bars.map((b) => Number(b[2]));
  assert.deepEqual(
    done,
    [...done].sort((a, b) => a - b),
    'tasks done only go up',
  );
  const line = screen.split('\n').find((l) => l.includes('Pi is roughly')) ?? '';
  assert.match(line.split('\r').filter(Boolean).at(-1) ?? '', /^Pi is roughly 3\.1\d*$/, line);
  return line;
}

const PI = ['submit', '--master', 'local', 'examples/pi.ts', '3000'];

test('on a terminal: the bar while the stage runs, cleared, and the answer on a line of its own', {
  skip: hasScript ? undefined : 'needs util-linux script',
  timeout: 180_000,
}, async () => {
  assertBuilt();
  const { code, screen } = await onTerminal(PI);
  assert.equal(code, 0, screen);
  const line = assertBarsThenAnswer(screen);
  assert.match(line, /(^|\] ?\r\r {79}\r)Pi is roughly/, 'the bar cleared before it');
});

test('no bar in a pipe, nor on a terminal with wick.ui.showConsoleProgress=false', {
  skip: hasScript ? undefined : 'needs util-linux script',
  timeout: 180_000,
}, async () => {
  assertBuilt();
  const out = await piped(PI);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /Pi is roughly/);
  assert.doesNotMatch(out.stderr + out.stdout, /\[Stage/);
  const off = await onTerminal([
    ...PI.slice(0, 1),
    '--conf',
    'wick.ui.showConsoleProgress=false',
    ...PI.slice(1),
  ]);
  assert.equal(off.code, 0, off.screen);
  assert.match(off.screen, /Pi is roughly/);
  assert.doesNotMatch(off.screen, /\[Stage/);
});

const PI_CLUSTER = [
  'submit',
  '--master',
  'local',
  '--deploy-mode',
  'cluster',
  'examples/pi.ts',
  '3000',
];

test("cluster mode on a terminal: the bar from the master, cleared, the driver's answer whole", {
  skip: hasScript ? undefined : 'needs util-linux script',
  timeout: 240_000,
}, async () => {
  assertBuilt();
  const { code, screen } = await onTerminal(PI_CLUSTER);
  assert.equal(code, 0, screen);
  assertBarsThenAnswer(screen);
  // Cleared before the driver's end is told: no bar after the last of the driver's lines.
  const end = screen.lastIndexOf('ended FINISHED');
  assert.ok(end > 0, screen.slice(-2000));
  assert.doesNotMatch(screen.slice(end), /\[Stage/);
});

test('cluster mode: no bar in a pipe, nor with wick.ui.showConsoleProgress=false', {
  skip: hasScript ? undefined : 'needs util-linux script',
  timeout: 240_000,
}, async () => {
  assertBuilt();
  const out = await piped(PI_CLUSTER);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /Pi is roughly/);
  assert.doesNotMatch(out.stderr + out.stdout, /\[Stage/);
  const off = await onTerminal([
    'submit',
    '--conf',
    'wick.ui.showConsoleProgress=false',
    ...PI_CLUSTER.slice(1),
  ]);
  assert.equal(off.code, 0, off.screen);
  assert.match(off.screen, /Pi is roughly/);
  assert.doesNotMatch(off.screen, /\[Stage/);
});
