/**
 * Benchmark `logs`: following an executor's stdout through the Worker (FollowLog → LogChunk) while
 * the executor writes 200 MB, against a plain copy of the same 200 MB file.
 *
 * A real Worker (startWorker, bench/lib/workerServer.ts) runs in its own process, registered with a
 * mock master in this process. The master launches bench/lib/logWriter.mjs as an executor; once it
 * runs, a follower endpoint in a client-mode RpcEnv here (as `wick logs -f` would have) asks the
 * worker to FollowLog its stdout from offset 0, and then the writer is told to start. The writer
 * writes fixed-size blocks straight to its stdout file, each ending in a trailer with the wall-clock
 * time just before it was written.
 *
 *   - mbPerSecond: the writer writing as fast as it can, bytes ÷ (time from "go" to the last byte
 *     reaching the follower). It cannot exceed the writer's own speed, which is shown too.
 *   - lostBytes: every chunk is checked by offset as it arrives (a gap is lost bytes, an overlap
 *     is counted apart), and after the run every received byte is compared with the file on disk
 *     at its offset, and the SHA-256 of the received stream with the one the writer computed of
 *     what it wrote. lostBytes = bytes written − bytes received intact, in all runs together.
 *   - lagP99Ms: for each block, the time its last byte reaches the follower minus its trailer's
 *     time (both performance.timeOrigin + performance.now(), one clock on one machine), p99 over
 *     the blocks of a run with the writer paced at the first of --rates MB/s (default 20: a very
 *     chatty executor, well within what can be followed, so the figure is latency, not backlog).
 *     The other rates (default 100) show where lag turns into backlog; unpaced, the writer outruns
 *     any follower and the lag is just the backlog. Both are shown for context.
 *   - baseline: the same 200 MB file copied with a read stream piped to a write stream (data
 *     through JavaScript, like the follower's), and with fs.copyFile (in the kernel) for context.
 *     ratios.followVsCopy = mbPerSecond ÷ stream-copy MB/s.
 *
 * Each run launches a new writer; figures are medians over --runs (default 3), lostBytes the sum.
 * Writes bench/results/logs.json. Goals: ≥ 200 MB/s, 0 bytes lost, lag p99 ≤ 20 ms.
 *
 *   npm run bench -- logs [--mb 200] [--block-kib 64] [--rates 20,100] [--runs 3] [--profile DIR]
 *
 * --profile DIR writes CPU profiles (node:inspector) of the worker and of this process (the
 * follower) over each unpaced run into DIR; the profiler's cost shows in those runs' figures.
 * MB here is 10^6 bytes.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  rmSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bytesOf } from '../backend/protocol/base64.js';
import { wickProtocol } from '../backend/protocol/index.js';
import type { WireMessage } from '../backend/protocol/registry.js';
import { FollowLog, LogChunk, LogFollowEnded } from '../backend/protocol/worker.js';
import { RpcEndpoint, RpcEnv } from '../backend/rpc/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { Control } from './lib/control.js';
import type { Goal } from './lib/goals.js';
import { MockMaster } from './lib/mockMaster.js';
import { type ServerProcess, startServer, stopAll } from './lib/process.js';
import { cpuSeconds, machineLoad } from './lib/procStat.js';
import { profilingCommand } from './lib/profiling.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, percentile, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

const GOAL_MB_PER_S = 200;
const GOAL_LAG_P99_MS = 20;

/** Issue 31's table: follow at ≥ 200 MB/s, nothing lost; and the lag at a paced rate. */
const goals: Goal[] = [
  { figure: 'figures.mbPerSecond', op: '>=', value: GOAL_MB_PER_S, what: 'follow MB/s' },
  { figure: 'figures.lostBytes', op: '==', value: 0, what: 'bytes lost' },
  { figure: 'figures.lagP99Ms', op: '<=', value: GOAL_LAG_P99_MS, what: 'follow lag p99 (ms)' },
];
const WATCHDOG_MS = 20 * 60_000;
const TRAILER = 19;
const APP_ID = 'app-20260101000000-0000';
const WRITER = fileURLToPath(new URL('./lib/logWriter.mjs', import.meta.url));

const { values: opts } = parseArgs({
  options: {
    mb: { type: 'string', default: sized('200', '2') },
    'block-kib': { type: 'string', default: '64' },
    rates: { type: 'string', default: sized('20,100', '20') },
    runs: { type: 'string', default: sized('3', '1') },
    profile: { type: 'string' },
  },
  strict: true,
});

const totalBytes = int('mb', opts.mb, 1, 100_000) * 1e6;
const blockBytes = int('block-kib', opts['block-kib'], 1, 16 * 1024) * 1024;
const rates = (opts.rates ?? '').split(',').map((r) => int('rates', r.trim(), 1, 100_000));
if (rates.length === 0) throw new Error('--rates needs at least one rate');
const runs = int('runs', opts.runs, 1, 50);
const wallNow = () => performance.timeOrigin + performance.now();

/** Receives one follow: checks offsets as chunks arrive, keeps them for the check afterwards. */
class Follower extends RpcEndpoint {
  next = 0;
  gapBytes = 0;
  overlapBytes = 0;
  chunks: { offset: number; data: Buffer }[] = [];
  lags: number[] = [];
  lastByteAt = 0;
  /** The last TRAILER bytes before `next`, for a trailer split between two chunks. */
  private tail: Buffer = Buffer.alloc(0);
  private ended: ((m: WireMessage) => void) | undefined;
  readonly done = new Promise<WireMessage>((r) => {
    this.ended = r;
  });

  constructor(private readonly total: number) {
    super();
    this.on(LogChunk, (c) => this.chunk(c.offset, bytesOf(c, 'data')));
    this.on(LogFollowEnded, (m) => this.ended?.(m));
  }

  private chunk(offset: number, data: Buffer): void {
    const at = wallNow();
    if (offset > this.next) {
      this.gapBytes += offset - this.next;
      this.tail = Buffer.alloc(0);
    } else if (offset < this.next) {
      this.overlapBytes += Math.min(data.length, this.next - offset);
    }
    this.chunks.push({ offset, data });
    const end = offset + data.length;
    // The blocks whose last byte is in this chunk: read their trailers.
    for (let k = Math.floor(offset / blockBytes); ; k++) {
      const blockEnd = Math.min((k + 1) * blockBytes, this.total);
      if (blockEnd > end) break;
      if (blockEnd > offset && blockEnd - k * blockBytes >= TRAILER) {
        const from = blockEnd - TRAILER - offset;
        const trailer =
          from >= 0
            ? data.subarray(from, from + TRAILER)
            : Buffer.concat([
                this.tail.subarray(this.tail.length + from),
                data.subarray(0, from + TRAILER),
              ]);
        const stamp = Number(trailer.toString('latin1', 1, TRAILER - 1));
        if (trailer.length === TRAILER && Number.isFinite(stamp)) this.lags.push(at - stamp);
      }
      if (blockEnd >= this.total) break;
    }
    this.tail =
      data.length >= TRAILER
        ? data.subarray(data.length - TRAILER)
        : Buffer.concat([this.tail, data]).subarray(-TRAILER);
    this.next = Math.max(this.next, end);
    if (this.next >= this.total && this.lastByteAt === 0) this.lastByteAt = at;
  }
}

interface WriterReport {
  bytes: number;
  sha256: string;
  blocks: number;
  ms: number;
}

interface Run {
  /** MB/s the writer was paced at; 0: as fast as it could. */
  rate: number;
  mbPerS: number;
  writerMbPerS: number;
  lostBytes: number;
  overlapBytes: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  chunks: number;
  file: string;
  /** CPU ms per MB followed: the worker process, and this one (the follower). */
  workerCpuMsPerMB: number;
  followerCpuMsPerMB: number;
}

/** Waits for the next writer to connect to the control server. */
function nextWriter(server: net.Server): Promise<net.Socket> {
  return new Promise((resolve) => server.once('connection', resolve));
}

function readReport(socket: net.Socket): Promise<WriterReport> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
    });
    socket.once('error', reject);
    socket.once('end', () => {
      try {
        resolve(JSON.parse(text) as WriterReport);
      } catch {
        reject(new Error(`bad report from the writer: ${text.slice(0, 200)}`));
      }
    });
  });
}

/** Compares every received chunk with the file at its offset; returns the bytes that differ. */
async function verify(file: string, f: Follower, report: WriterReport): Promise<number> {
  const fh = await open(file, 'r');
  let differing = 0;
  try {
    const size = (await fh.stat()).size;
    if (size !== report.bytes)
      throw new Error(`${file} has ${size} bytes, the writer wrote ${report.bytes}`);
    const whole = createHash('sha256');
    const buf = Buffer.alloc(16 * 1024 * 1024);
    for (let pos = 0; pos < size; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
      whole.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    if (whole.digest('hex') !== report.sha256) {
      throw new Error(`${file} differs from what the writer wrote (SHA-256)`);
    }
    const received = createHash('sha256');
    let expected = 0;
    for (const c of f.chunks) {
      const onDisk = Buffer.alloc(c.data.length);
      await fh.read(onDisk, 0, c.data.length, c.offset);
      if (!onDisk.equals(c.data)) {
        for (let i = 0; i < c.data.length; i++) if (onDisk[i] !== c.data[i]) differing++;
      }
      if (c.offset === expected) {
        received.update(c.data);
        expected += c.data.length;
      }
    }
    if (differing === 0 && expected === report.bytes && received.digest('hex') !== report.sha256) {
      throw new Error('the received stream differs from what the writer wrote (SHA-256)');
    }
  } finally {
    await fh.close();
  }
  return differing;
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  const dir = mkdtempSync(join(tmpdir(), 'wick-bench-logs-'));
  const master = await MockMaster.start();
  const followerEnv = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'benchFollower',
    clientMode: true,
  });
  const control = net.createServer();
  try {
    await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
    const port = (control.address() as net.AddressInfo).port;
    const worker = await startServer<{ address: string; pid: number }>(
      'bench/lib/workerServer.ts',
      { args: [master.address, dir], env: { WICK_LOG_LEVEL: 'WARN' } },
    );
    const workerControl = new Control(worker as ServerProcess<unknown>, 'worker');
    const profileDir = opts.profile ? resolve(opts.profile) : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    await master.worker();
    const workerRef = await followerEnv.setupEndpointRef(worker.ready.address, 'Worker');
    console.log(
      `logs: following ${fmt(totalBytes / 1e6)} MB of an executor's stdout through a Worker (pid ${worker.pid}), blocks of ${blockBytes / 1024} KiB; ${runs} runs each unpaced and paced at ${rates.join(', ')} MB/s (${machineLoad()})`,
    );

    let execId = 0;
    const followRun = async (rate: number, total = totalBytes): Promise<Run> => {
      const id = execId++;
      const follower = new Follower(total);
      const name = `Follower${id}`;
      const self = followerEnv.setupEndpoint(name, follower);
      const writerConnected = nextWriter(control);
      const argv = [
        process.execPath,
        WRITER,
        String(total),
        String(blockBytes),
        String(rate),
        String(port),
      ];
      master.launch(APP_ID, id, {
        name: 'logs-bench',
        user: 'bench',
        memoryPerExecutorMB: 64,
        command: { argv, env: {} },
      });
      const finished = master.finished(APP_ID, id, 10 * 60_000);
      await master.stateChange(APP_ID, id, 'RUNNING');
      await workerRef.ask(
        FollowLog({
          appId: APP_ID,
          execId: id,
          stream: 'stdout',
          followId: `bench-${id}`,
          offset: 0,
          follower: self.toData(),
        }),
      );
      const socket = await writerConnected;
      const report = readReport(socket);
      const profiling = profileDir !== undefined && rate === 0 && total === totalBytes;
      if (profiling) {
        await workerControl.request({ cmd: 'profile-start' });
        await profilingCommand({ cmd: 'profile-start' });
      }
      const workerCpu0 = cpuSeconds(worker.pid);
      const followerCpu0 = process.cpuUsage();
      const tGo = wallNow();
      socket.write('go\n');
      const [written, ended, end] = await Promise.all([report, follower.done, finished]);
      const workerCpu = cpuSeconds(worker.pid) - workerCpu0;
      const followerUsage = process.cpuUsage(followerCpu0);
      const followerCpu = (followerUsage.user + followerUsage.system) / 1e6;
      if (profiling) {
        const w = join(profileDir, `worker-unpaced-${id}.cpuprofile`);
        const f = join(profileDir, `follower-unpaced-${id}.cpuprofile`);
        await workerControl.request({ cmd: 'profile-stop', file: w });
        await profilingCommand({ cmd: 'profile-stop', file: f });
        console.log(`  profiles: ${w}, ${f}`);
      }
      if (end.state !== 'EXITED' || end.exitStatus !== 0) {
        throw new Error(`writer ${id} ended ${end.state} (${end.exitStatus}): ${end.message}`);
      }
      if (ended.totalSize !== written.bytes) {
        throw new Error(`follow ended at ${ended.totalSize}, the writer wrote ${written.bytes}`);
      }
      await followerEnv.stopEndpoint(self);
      const file = join(dir, 'work', APP_ID, String(id), 'stdout');
      const differing = await verify(file, follower, written);
      const receivedIntact = Math.min(follower.next, written.bytes) - follower.gapBytes - differing;
      const lags = follower.lags.sort((a, b) => a - b);
      const seconds = (follower.lastByteAt - tGo) / 1000;
      return {
        rate,
        mbPerS: written.bytes / 1e6 / seconds,
        writerMbPerS: written.bytes / 1e6 / (written.ms / 1000),
        lostBytes: written.bytes - receivedIntact,
        overlapBytes: follower.overlapBytes,
        lagP50Ms: percentile(lags, 50),
        lagP99Ms: percentile(lags, 99),
        lagMaxMs: lags[lags.length - 1] as number,
        chunks: follower.chunks.length,
        file,
        workerCpuMsPerMB: (workerCpu * 1000) / (written.bytes / 1e6),
        followerCpuMsPerMB: (followerCpu * 1000) / (written.bytes / 1e6),
      };
    };

    // Warm up both sides' JIT with a short unpaced follow (not measured).
    await followRun(0, Math.min(totalBytes, 20e6));
    const all: Run[] = [];
    const kinds = [0, ...rates];
    for (let r = 0; r < runs; r++) {
      // Rotate the order from run to run.
      for (let k = 0; k < kinds.length; k++) {
        const rate = kinds[(r + k) % kinds.length] as number;
        const run = await followRun(rate);
        all.push(run);
        console.log(
          `  ${rate > 0 ? `paced ${rate} MB/s` : 'unpaced'}: ${fmt(run.mbPerS, 1)} MB/s followed (writer ${fmt(run.writerMbPerS, 0)} MB/s), lag p50 ${fmt(run.lagP50Ms, 2)} ms, p99 ${fmt(run.lagP99Ms, 2)} ms, ${fmt(run.lostBytes)} bytes lost, ${fmt(run.chunks)} LogChunks`,
        );
      }
    }
    const unpaced = all.filter((r) => r.rate === 0);
    const paced = all.filter((r) => r.rate === rates[0]);

    // Baselines: copy one of the 200 MB files, a few times each, alternating.
    const source = (unpaced[0] as Run).file;
    const streamMs: number[] = [];
    const copyMs: number[] = [];
    for (let r = 0; r < Math.max(3, runs); r++) {
      const a = join(dir, `copy-stream-${r}`);
      let t0 = performance.now();
      await pipeline(createReadStream(source), createWriteStream(a));
      streamMs.push(performance.now() - t0);
      rmSync(a);
      const b = join(dir, `copy-file-${r}`);
      t0 = performance.now();
      copyFileSync(source, b);
      copyMs.push(performance.now() - t0);
      rmSync(b);
    }
    const streamMbPerS = totalBytes / 1e6 / (median(streamMs) / 1000);
    const copyFileMbPerS = totalBytes / 1e6 / (median(copyMs) / 1000);

    const mbPerSecond = median(unpaced.map((r) => r.mbPerS));
    const lagP99Ms = median(paced.map((r) => r.lagP99Ms));
    const lostBytes = all.reduce((s, r) => s + r.lostBytes, 0);
    const byRate = (rate: number) => all.filter((r) => r.rate === rate);
    const lagAt: Record<string, number> = {};
    for (const rate of rates.slice(1)) {
      lagAt[`lagP99MsAt${rate}MBps`] = round(median(byRate(rate).map((r) => r.lagP99Ms)), 2);
    }
    const file = writeResults('logs', {
      goals,
      figures: {
        mbPerSecond: round(mbPerSecond, 1),
        lostBytes,
        lagP99Ms: round(lagP99Ms, 2),
        lagP50Ms: round(median(paced.map((r) => r.lagP50Ms)), 2),
        lagPacedMBps: rates[0] as number,
        ...lagAt,
        lagP99MsUnpaced: round(median(unpaced.map((r) => r.lagP99Ms)), 1),
        writerMbPerSecond: round(median(unpaced.map((r) => r.writerMbPerS)), 1),
        workerCpuMsPerMB: round(median(unpaced.map((r) => r.workerCpuMsPerMB)), 2),
        followerCpuMsPerMB: round(median(unpaced.map((r) => r.followerCpuMsPerMB)), 2),
        overlapBytes: all.reduce((s, r) => s + r.overlapBytes, 0),
        runs,
      },
      baseline: {
        streamCopyMbPerSecond: round(streamMbPerS, 1),
        copyFileMbPerSecond: round(copyFileMbPerS, 1),
      },
      ratios: { followVsCopy: round(mbPerSecond / streamMbPerS, 3) },
    });

    const groups = kinds.map((rate) => byRate(rate));
    const row = (name: string, f: (r: Run) => number, d = 1) => [
      name,
      ...groups.map((g) => fmt(median(g.map(f)), d)),
    ];
    printTable(
      `logs — ${fmt(totalBytes / 1e6)} MB per run, median of ${runs} runs each`,
      ['', ...kinds.map((rate) => (rate > 0 ? `paced ${rate} MB/s` : 'unpaced'))],
      [
        row('followed (MB/s)', (r) => r.mbPerS),
        row('writer alone (MB/s)', (r) => r.writerMbPerS),
        row('block lag p50 (ms)', (r) => r.lagP50Ms, 2),
        row('block lag p99 (ms)', (r) => r.lagP99Ms, 2),
        row('block lag max (ms)', (r) => r.lagMaxMs, 2),
        row('LogChunks', (r) => r.chunks, 0),
        row('worker CPU ms per MB', (r) => r.workerCpuMsPerMB, 2),
        row('follower CPU ms per MB', (r) => r.followerCpuMsPerMB, 2),
        [
          'bytes lost (all runs)',
          ...groups.map((g) => fmt(g.reduce((s, r) => s + r.lostBytes, 0))),
        ],
      ],
    );
    printTable(
      'Baseline: copying the same file',
      ['', 'MB/s', 'median ms'],
      [
        ['read stream → write stream', fmt(streamMbPerS, 0), fmt(median(streamMs), 1)],
        ['fs.copyFile (context)', fmt(copyFileMbPerS, 0), fmt(median(copyMs), 1)],
      ],
    );
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    printTable(
      'Goals',
      ['figure', 'measured', 'goal', ''],
      [
        [
          'mbPerSecond',
          fmt(mbPerSecond, 1),
          `≥ ${GOAL_MB_PER_S}`,
          verdict(mbPerSecond >= GOAL_MB_PER_S),
        ],
        ['lostBytes', fmt(lostBytes), '0', verdict(lostBytes === 0)],
        [
          'lagP99Ms',
          fmt(lagP99Ms, 2),
          `≤ ${GOAL_LAG_P99_MS}`,
          verdict(lagP99Ms <= GOAL_LAG_P99_MS),
        ],
      ],
    );
    console.log(
      `(followVsCopy = ${(mbPerSecond / streamMbPerS).toFixed(3)}; at the end: ${machineLoad()})`,
    );
    console.log(`\nWrote ${file}`);
  } finally {
    control.close();
    await followerEnv.stop();
    await stopAll();
    await master.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runBenchmark('logs', main, WATCHDOG_MS);
