/**
 * Benchmark `launch`: from a master's LaunchExecutor to the executor's process running, against a
 * bare child_process.spawn of the same command, measured the same way in the same run.
 *
 * A real Worker (startWorker, bench/lib/workerServer.ts) runs in its own process and registers with
 * a mock master in this process (bench/lib/mockMaster.ts). The command is
 *
 *   node -e "process.stdout.write(String(performance.timeOrigin + performance.now()))"
 *
 * whose first statement writes the wall-clock time (ms, µs resolution) at which it runs. The time to
 * "running" is that stamp minus the same clock read here just before the launch:
 *
 *   - Wick: just before mockMaster sends LaunchExecutor; the worker then creates the executor's
 *     directory and log files, fills in the command and starts it with execa (stdout to a file);
 *     the stamp is read back from that file after the process exits.
 *   - spawn (the baseline): just before child_process.spawn of the same argv from this process,
 *     stdout to a file opened beforehand.
 *
 * Both are dominated by Node's own start-up (tens of ms); the ratio is what Wick adds. The two
 * alternate (and alternate which goes first), one launch at a time, after a warm-up. For context,
 * a bare execa of the same command from this process and the time until the worker's
 * ExecutorStateChanged(RUNNING) arrives (sent once the child has a pid, before Node has started)
 * are shown too.
 *
 * The stamp is performance.timeOrigin + performance.now() in both processes: wall-clock time at
 * process start plus a monotonic clock since, so the two clocks agree to well under a millisecond
 * on one machine.
 *
 * Writes bench/results/launch.json. Goal: ratios.launchVsSpawn (p50 ÷ p50) ≤ 1.3.
 *
 *   npm run bench -- launch [--launches 40] [--warmup 5] [--profile DIR]
 *
 * --profile DIR writes a CPU profile (node:inspector) of the worker over the measured launches.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { Control } from './lib/control.js';
import type { Goal } from './lib/goals.js';
import { MockMaster } from './lib/mockMaster.js';
import { type ServerProcess, startServer, stopAll } from './lib/process.js';
import { machineLoad } from './lib/procStat.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, percentile, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

const GOAL_RATIO = 1.3;

const goals: Goal[] = [
  { figure: 'ratios.launchVsSpawn', op: '<=', value: GOAL_RATIO, what: 'launch p50 ÷ spawn p50' },
];
const WATCHDOG_MS = 15 * 60_000;
const SCRIPT = 'process.stdout.write(String(performance.timeOrigin + performance.now()))';
const ARGV = [process.execPath, '-e', SCRIPT];
const APP_ID = 'app-20260101000000-0000';

const { values: opts } = parseArgs({
  options: {
    launches: { type: 'string', default: sized('40', '3') },
    warmup: { type: 'string', default: sized('5', '1') },
    profile: { type: 'string' },
  },
  strict: true,
});

const launches = int('launches', opts.launches, 1, 10_000);
const warmup = int('warmup', opts.warmup, 0, 1000);
const wallNow = () => performance.timeOrigin + performance.now();

/** The stamp a child wrote to its stdout file. */
function stampIn(file: string): number {
  const text = readFileSync(file, 'utf8').trim();
  const t = Number(text);
  if (!Number.isFinite(t) || text === '') throw new Error(`no time stamp in ${file}: "${text}"`);
  return t;
}

interface Sample {
  wickMs: number;
  wickRunningMsgMs: number;
  spawnMs: number;
  execaMs: number;
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  const dir = mkdtempSync(join(tmpdir(), 'wick-bench-launch-'));
  const master = await MockMaster.start();
  try {
    const worker = await startServer<{ address: string; pid: number }>(
      'bench/lib/workerServer.ts',
      { args: [master.address, dir], env: { WICK_LOG_LEVEL: 'WARN' } },
    );
    const workerControl = new Control(worker as ServerProcess<unknown>, 'worker');
    const profileDir = opts.profile ? resolve(opts.profile) : undefined;
    await master.worker();
    const workDir = join(dir, 'work');
    const bareDir = join(dir, 'bare');
    mkdirSync(bareDir);
    console.log(
      `launch: LaunchExecutor → running through a Worker (pid ${worker.pid}) vs child_process.spawn, ${launches} each after ${warmup} warm-up, alternating (${machineLoad()})`,
    );

    let execId = 0;
    let bareId = 0;
    const appDesc = {
      name: 'launch-bench',
      user: 'bench',
      memoryPerExecutorMB: 64,
      command: { argv: ARGV, env: {} },
    };

    const wick = async (): Promise<{ ms: number; runningMsgMs: number }> => {
      const id = execId++;
      const running = master.stateChange(APP_ID, id, 'RUNNING');
      const finished = master.finished(APP_ID, id);
      const t0 = wallNow();
      master.launch(APP_ID, id, appDesc);
      const [r, end] = await Promise.all([running, finished]);
      if (end.state !== 'EXITED' || end.exitStatus !== 0) {
        throw new Error(`executor ${id} ended ${end.state} (${end.exitStatus}): ${end.message}`);
      }
      const stamp = stampIn(join(workDir, APP_ID, String(id), 'stdout'));
      return { ms: stamp - t0, runningMsgMs: r.at - t0 };
    };

    const bare = async (): Promise<number> => {
      const d = join(bareDir, String(bareId++));
      mkdirSync(d);
      const file = join(d, 'stdout');
      const fd = openSync(file, 'w');
      const t0 = wallNow();
      const child = spawn(ARGV[0] as string, ARGV.slice(1), {
        cwd: d,
        stdio: ['ignore', fd, fd],
      });
      closeSync(fd);
      const code = await new Promise<number | null>((res, rej) => {
        child.once('error', rej);
        child.once('exit', (c) => res(c));
      });
      if (code !== 0) throw new Error(`bare spawn exited ${code}`);
      return stampIn(file) - t0;
    };

    const bareExeca = async (): Promise<number> => {
      const d = join(bareDir, String(bareId++));
      mkdirSync(d);
      const file = join(d, 'stdout');
      const fd = openSync(file, 'w');
      const t0 = wallNow();
      type Fd = 3;
      const child = execa(ARGV[0] as string, ARGV.slice(1), {
        cwd: d,
        stdin: 'ignore',
        stdout: fd as Fd,
        stderr: fd as Fd,
        buffer: false,
        reject: false,
      });
      closeSync(fd);
      const r = await child;
      if (r.exitCode !== 0) throw new Error(`bare execa exited ${r.exitCode}`);
      return stampIn(file) - t0;
    };

    for (let i = 0; i < warmup; i++) {
      await wick();
      await bare();
      await bareExeca();
    }

    if (profileDir) {
      mkdirSync(profileDir, { recursive: true });
      await workerControl.request({ cmd: 'profile-start' });
    }
    const samples: Sample[] = [];
    for (let i = 0; i < launches; i++) {
      // Rotate the order, so that none of the three always follows another.
      const s: Partial<Sample> = {};
      const steps = [
        async () => {
          const w = await wick();
          s.wickMs = w.ms;
          s.wickRunningMsgMs = w.runningMsgMs;
        },
        async () => {
          s.spawnMs = await bare();
        },
        async () => {
          s.execaMs = await bareExeca();
        },
      ];
      for (let k = 0; k < steps.length; k++)
        await (steps[(i + k) % steps.length] as () => Promise<void>)();
      samples.push(s as Sample);
    }
    if (profileDir) {
      const f = join(profileDir, 'worker-launch.cpuprofile');
      await workerControl.request({ cmd: 'profile-stop', file: f });
      console.log(`  profile of the worker: ${f}`);
    }

    const sorted = (f: (s: Sample) => number) => samples.map(f).sort((a, b) => a - b);
    const w = sorted((s) => s.wickMs);
    const b = sorted((s) => s.spawnMs);
    const e = sorted((s) => s.execaMs);
    const r = sorted((s) => s.wickRunningMsgMs);
    const stat = (xs: number[]) => ({
      p50: percentile(xs, 50),
      p90: percentile(xs, 90),
      min: xs[0] as number,
      max: xs[xs.length - 1] as number,
    });
    const sw = stat(w);
    const sb = stat(b);
    const se = stat(e);
    const sr = stat(r);
    const ratio = sw.p50 / sb.p50;
    // Paired differences: each Wick launch against the spawn next to it.
    const extra = median(samples.map((s) => s.wickMs - s.spawnMs));

    const file = writeResults('launch', {
      goals,
      figures: {
        launchP50Ms: round(sw.p50, 2),
        launchP90Ms: round(sw.p90, 2),
        runningMessageP50Ms: round(sr.p50, 2),
        addedP50Ms: round(extra, 2),
        launches,
      },
      baseline: {
        spawnP50Ms: round(sb.p50, 2),
        spawnP90Ms: round(sb.p90, 2),
        execaP50Ms: round(se.p50, 2),
      },
      ratios: { launchVsSpawn: round(ratio, 3) },
    });

    const row = (name: string, s: ReturnType<typeof stat>) => [
      name,
      fmt(s.p50, 2),
      fmt(s.p90, 2),
      fmt(s.min, 2),
      fmt(s.max, 2),
    ];
    printTable(
      `launch — ms from the launch to the child's first statement, ${launches} launches each`,
      ['', 'p50', 'p90', 'min', 'max'],
      [
        row('Wick: LaunchExecutor → running', sw),
        row('baseline: child_process.spawn', sb),
        row('context: bare execa', se),
        row('context: → ExecutorStateChanged(RUNNING) here', sr),
      ],
    );
    printTable(
      'Goal',
      ['ratio', 'measured', 'goal', ''],
      [
        [
          'launchVsSpawn (p50 ÷ p50)',
          ratio.toFixed(3),
          `≤ ${GOAL_RATIO}`,
          ratio <= GOAL_RATIO ? 'met' : 'MISSED',
        ],
      ],
    );
    console.log(
      `(median paired difference, Wick − spawn: ${fmt(extra, 2)} ms; at the end: ${machineLoad()})`,
    );
    console.log(`\nWrote ${file}`);
  } finally {
    await stopAll();
    await master.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runBenchmark('launch', main, WATCHDOG_MS);
