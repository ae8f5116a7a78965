/**
 * Benchmark `wordcount`: WordCount (examples/wordcount.ts's job: textFile → flatMap → filter →
 * map → reduceByKey → sortBy count → take 20) over generated text on 2 executors × 1 core, against,
 * in the same run and on the same file:
 *
 * - (a) single process: a hand-written word count in one Node process (bench/apps/wordCountSingle.mjs:
 *   1 MiB reads, lines split on whitespace, a Map, sort), timed from its spawn to its exit.
 *   ratios.vsSingleProcess = Wick's job time ÷ (a)'s. Two cores against one: 0.5 is the limit,
 *   the goal is ≤ 0.75.
 * - (b) sort | uniq: `tr -s '[:space:]' '\n' < f | sort | uniq -c | sort -rn | head -20` with
 *   LC_ALL=C. ratios.vsSortUniq = Wick's ÷ (b)'s; the goal is < 1.
 *
 * Wick's time is the job alone, timed from the action's call to its result, by a driver in this
 * process whose two executors have registered (as bench/pi.bench.ts's "job"); its answer is
 * checked against (a)'s (the same 20 counts, each word's count the same).
 * The text: lines of 12 words drawn from a vocabulary of 50,000 with a Zipf(1) law (seeded, so
 * every run counts the same file), generated once into the temp folder.
 * Printed beside the times, from the task metrics the driver hears (wc.addListener): shuffle
 * bytes written and read, records, spills and bytes spilled; and each executor's peak RSS (VmHWM).
 *
 * The no-map-side-combine variant: the same count after `repartition(partitions)` of the lines
 * (a shuffle of whole lines, which nothing combines: as large as the input), on executors of
 * --executor-mb MiB (wick.executor.memory) with the default spill settings, at --small-mb and
 * --mb in applications of their own: the shuffle is larger than the executors' memory at the
 * larger size. Each executor's peak RSS should stay under a bound its settings give, whatever the
 * input: its RSS once registered + wick.executor.memory (its task threads' heaps) + 2 ×
 * wick.reducer.maxSizeFetchToMem (the blocks it holds in memory, in the main thread and copied to
 * a task thread). Bytes read can pass bytes written: sortBy's sample job reads its parent's
 * shuffle once more. Writes bench/results/wordcount.json.
 *
 *   npm run bench -- wordcount [--mb 256] [--small-mb 64] [--rounds 1] [--partitions 8] [--executor-mb 192]
 */
import { execFileSync } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { addTaskMetrics, type TaskMetrics, type WickContext } from '../backend/app/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { runCommand } from './lib/command.js';
import type { Goal } from './lib/goals.js';
import { stopAll } from './lib/process.js';
import { machineLoad } from './lib/procStat.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';
import { connect, executorPids, startCluster, waitForIdleCluster } from './lib/wickApp.js';

const GOAL_VS_SINGLE = 0.75;

const goals: Goal[] = [
  { figure: 'ratios.vsSingleProcess', op: '<=', value: GOAL_VS_SINGLE, what: 'job ÷ one process' },
  { figure: 'ratios.vsSortUniq', op: '<', value: 1, what: 'job ÷ tr | sort | uniq -c' },
];
const WATCHDOG_MS = 30 * 60_000;
const root = fileURLToPath(new URL('..', import.meta.url));

const { values: opts } = parseArgs({
  options: {
    mb: { type: 'string', default: sized('256', '2') },
    'small-mb': { type: 'string', default: sized('64', '1') },
    rounds: { type: 'string', default: '1' },
    partitions: { type: 'string', default: sized('8', '2') },
    'executor-mb': { type: 'string', default: '192' },
  },
  strict: true,
});
const mb = int('mb', opts.mb, 1, 8192);
const smallMb = int('small-mb', opts['small-mb'], 1, 8192);
const rounds = int('rounds', opts.rounds, 1, 20);
const partitions = int('partitions', opts.partitions, 1, 10_000);
const executorMb = int('executor-mb', opts['executor-mb'], 64, 65_536);

type Top = [string, number][];

/** A seeded corpus of `megabytes` MiB in the temp folder (made once, kept for later runs). */
async function corpus(megabytes: number): Promise<string> {
  const file = join(tmpdir(), `wick-bench-wordcount-v2-${megabytes}m.txt`);
  if (existsSync(file) && statSync(file).size >= megabytes * 2 ** 20) return file;
  const vocabulary = 50_000;
  const words = Array.from({ length: vocabulary }, (_, i) => `w${i.toString(36)}`);
  // Zipf(1): P(rank r) ∝ 1/r, drawn by inverting the cumulative sums.
  const cumulative = new Float64Array(vocabulary);
  let sum = 0;
  for (let r = 0; r < vocabulary; r++) cumulative[r] = sum += 1 / (r + 1);
  // mulberry32, seeded: 32-bit integer steps (Math.imul), so every run writes the same text.
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const draw = () => {
    const x = random() * sum;
    let lo = 0;
    let hi = vocabulary - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo] as string;
  };
  const out = createWriteStream(`${file}.part`);
  let written = 0;
  const target = megabytes * 2 ** 20;
  while (written < target) {
    const lines: string[] = [];
    for (let l = 0; l < 2000; l++) {
      const line: string[] = [];
      for (let w = 0; w < 12; w++) line.push(draw());
      lines.push(line.join(' '));
    }
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error) => (err ? reject(err) : resolve())),
  );
  execFileSync('mv', [`${file}.part`, file]);
  return file;
}

/** (a): the single-process count, in a child process; its time and answer. */
async function singleProcess(file: string): Promise<{ ms: number; top: Top }> {
  const r = await runCommand(
    process.execPath,
    [join(root, 'bench/apps/wordCountSingle.mjs'), file],
    {
      timeoutMs: 20 * 60_000,
    },
  );
  if (r.code !== 0)
    throw new Error(`the single-process count failed: ${r.lines.map((l) => l.text).join('\n')}`);
  const out = r.lines.find((l) => l.stream === 'stdout')?.text as string;
  return { ms: r.ms, top: (JSON.parse(out) as { top: Top }).top };
}

/** (b): tr | sort | uniq -c | sort -rn | head, in C locale. */
async function sortUniq(file: string): Promise<{ ms: number; top: Top }> {
  const r = await runCommand(
    'bash',
    ['-c', `tr -s '[:space:]' '\\n' < '${file}' | sort | uniq -c | sort -rn | head -20`],
    { env: { ...process.env, LC_ALL: 'C' }, timeoutMs: 30 * 60_000 },
  );
  if (r.code !== 0) throw new Error(`sort | uniq failed: ${r.lines.map((l) => l.text).join('\n')}`);
  const top = r.lines
    .filter((l) => l.stream === 'stdout' && l.text.trim())
    .map((l): [string, number] => {
      const [n, w] = l.text.trim().split(/\s+/);
      return [w as string, Number(n)];
    });
  return { ms: r.ms, top };
}

function wordCount(wc: WickContext, file: string): Promise<Top> {
  return wc
    .textFile(file, partitions)
    .flatMap((line: string) => line.split(/\s+/))
    .filter((w) => w.length > 0)
    .map((w): [string, number] => [w, 1])
    .reduceByKey((a, b) => a + b)
    .sortBy(([, n]) => n, false)
    .take(20);
}

/** The count after a shuffle that combines nothing: the lines dealt out again (repartition). */
function wordCountRepartitioned(wc: WickContext, file: string): Promise<Top> {
  return wc
    .textFile(file, partitions)
    .repartition(partitions)
    .flatMap((line: string) => line.split(/\s+/))
    .filter((w) => w.length > 0)
    .map((w): [string, number] => [w, 1])
    .reduceByKey((a, b) => a + b)
    .sortBy(([, n]) => n, false)
    .take(20);
}

/** The job's result and the sum of its tasks' metrics (the driver's listener). */
async function measured<T>(wc: WickContext, job: () => Promise<T>): Promise<[T, TaskMetrics]> {
  const total: TaskMetrics = {};
  const off = wc.addListener({ onTaskEnd: (e) => void addTaskMetrics(total, e.metrics) });
  try {
    return [await job(), total];
  } finally {
    off();
  }
}

/** The same answer: the same 20 counts in order, and each word's count as (a) counted it. */
function checkSame(what: string, top: Top, expected: Top): void {
  const counts = (t: Top) => t.map(([, n]) => n).join(',');
  if (counts(top) !== counts(expected))
    throw new Error(`${what}'s top counts ${counts(top)} differ from (a)'s ${counts(expected)}`);
  const byWord = new Map(expected);
  for (const [w, n] of top) {
    const e = byWord.get(w);
    // A word tied at the 20th count may be another of the same count.
    if (e !== undefined && e !== n) throw new Error(`${what} counted ${w} ${n} times, (a) ${e}`);
  }
}

/** Bytes of the map outputs' data files under the workers' local dirs. */
function shuffleBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^shuffle_\d+_\d+_0\.data$/.test(e.name)) {
        bytes += statSync(p).size;
        files++;
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return { bytes, files };
}

function peakRssMB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function rssMB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** wick.reducer.maxSizeFetchToMem's default, in MiB (the variant leaves it). */
const FETCH_TO_MEM_MB = 32;

async function main(): Promise<void> {
  setLogLevel('WARN');
  console.log(`Generating ${mb} MiB and ${smallMb} MiB of text (once; kept in ${tmpdir()})…`);
  const big = await corpus(mb);
  const small = await corpus(smallMb);
  // The applications' scratch dirs (where map outputs go) in a folder of the run's own, to be measured.
  const localDir = mkdtempSync(join(tmpdir(), 'wick-bench-wordcount-local-'));
  process.once('exit', () => rmSync(localDir, { recursive: true, force: true }));
  const cluster = await startCluster({
    workers: 2,
    cores: 1,
    // The corpus is this machine's "shared file system": confined executors (the default) see
    // it only where the workers show it to them, read-only, as a user's input dir would be.
    conf: [`wick.local.dir=${localDir}`, `wick.executor.sandbox.readOnlyPaths=${big},${small}`],
  });
  const { url } = cluster.ready;
  const times = { single: [] as number[], sortUniq: [] as number[], wick: [] as number[] };
  let shuffle = { bytes: 0, files: 0 };
  let metrics: TaskMetrics = {};
  const rss: Record<string, number[]> = {};
  const variant: Record<
    string,
    { ms: number; metrics: TaskMetrics; rss: number[]; startRss: number[] }
  > = {};
  try {
    for (const [label, file] of [
      ['small', small],
      ['big', big],
    ] as const) {
      await waitForIdleCluster(url);
      const wc = await connect(url, `bench wordcount ${label}`, 2);
      let expected: { ms: number; top: Top };
      try {
        expected = await singleProcess(file);
        const before = shuffleBytes(localDir);
        const t0 = performance.now();
        const [top, m] = await measured(wc, () => wordCount(wc, file));
        const ms = performance.now() - t0;
        checkSame('Wick', top, expected.top);
        const after = shuffleBytes(localDir);
        rss[label] = executorPids(wc.appId, cluster.pid).map(peakRssMB);
        if (label === 'big') {
          shuffle = { bytes: after.bytes - before.bytes, files: after.files - before.files };
          metrics = m;
          times.wick.push(ms);
          times.single.push(expected.ms);
          for (let r = 1; r < rounds; r++) {
            times.single.push((await singleProcess(file)).ms);
            const t1 = performance.now();
            checkSame('Wick', await wordCount(wc, file), expected.top);
            times.wick.push(performance.now() - t1);
          }
          for (let r = 0; r < rounds; r++) {
            const b = await sortUniq(file);
            checkSame('sort | uniq', b.top, expected.top);
            times.sortUniq.push(b.ms);
          }
        }
      } finally {
        await wc.stop();
      }
      // The variant, in an application of its own whose executors have executorMb MiB.
      await waitForIdleCluster(url);
      const vc = await connect(url, `bench wordcount repartitioned ${label}`, 2, {
        'wick.executor.memory': `${executorMb}m`,
      });
      try {
        const startRss = executorPids(vc.appId, cluster.pid).map(rssMB);
        const t0 = performance.now();
        const [top, m] = await measured(vc, () => wordCountRepartitioned(vc, file));
        const ms = performance.now() - t0;
        checkSame('Wick (repartitioned)', top, expected.top);
        variant[label] = {
          ms,
          metrics: m,
          rss: executorPids(vc.appId, cluster.pid).map(peakRssMB),
          startRss,
        };
      } finally {
        await vc.stop();
      }
    }
  } finally {
    await stopAll();
  }
  const single = median(times.single);
  const su = median(times.sortUniq);
  const wick = median(times.wick);
  const ratios = {
    vsSingleProcess: round(wick / single, 3),
    vsSortUniq: round(wick / su, 3),
  };
  printTable(
    `WordCount of ${mb} MiB, ${partitions} partitions (median of ${rounds})`,
    ['', 'time', 'Wick ÷ it'],
    [
      ['Wick, 2 executors × 1 core (job)', `${fmt(wick)} ms`, ''],
      ['(a) single Node process', `${fmt(single)} ms`, fmt(ratios.vsSingleProcess, 3)],
      ['(b) tr | sort | uniq -c (LC_ALL=C)', `${fmt(su)} ms`, fmt(ratios.vsSortUniq, 3)],
    ],
  );
  const fmtRss = (xs: number[] | undefined) => (xs ?? []).map((x) => `${fmt(x)} MiB`).join(', ');
  const mib = (b: number | undefined) => `${fmt((b ?? 0) / 2 ** 20, 1)} MiB`;
  const read = (m: TaskMetrics) =>
    (m.shuffleRead?.localBytesRead ?? 0) + (m.shuffleRead?.remoteBytesRead ?? 0);
  const describe = (m: TaskMetrics) =>
    `${mib(m.shuffleWrite?.bytesWritten)} written (${fmt(m.shuffleWrite?.recordsWritten ?? 0)} records), ${mib(read(m))} read (${mib(m.shuffleRead?.remoteBytesReadToDisk)} of the remote bytes fetched to disk, fetch wait ${fmt(m.shuffleRead?.fetchWaitTimeMs ?? 0)} ms); spills: ${m.spillCount ?? 0} (${mib(m.diskBytesSpilled)} on disk)`;
  console.log(
    `Shuffle (task metrics; what is read includes sortBy's sample job reading its parent once more): ${describe(metrics)}; on disk: ${mib(shuffle.bytes)} in ${shuffle.files} map outputs`,
  );
  console.log(
    `Peak RSS per executor: ${smallMb} MiB input ${fmtRss(rss.small)}; ${mb} MiB input ${fmtRss(rss.big)}`,
  );
  let allUnder = true;
  for (const [label, v] of Object.entries(variant)) {
    const bounds = v.startRss.map((r) => r + executorMb + 2 * FETCH_TO_MEM_MB);
    const under = v.rss.every((r, i) => r <= (bounds[i] as number));
    allUnder &&= under;
    console.log(
      `No map-side combine (repartition(${partitions}) of the lines first), ${label === 'big' ? mb : smallMb} MiB input, executors of ${executorMb} MiB: ${fmt(v.ms)} ms; ${describe(v.metrics)}; RSS once registered ${fmtRss(v.startRss)}, peak ${fmtRss(v.rss)}, bound ${fmtRss(bounds)}: ${under ? 'under' : 'NOT under'}`,
    );
  }
  console.log(
    `No map-side combine: peak RSS ${allUnder ? 'under' : 'NOT under'} the bound at both sizes (RSS once registered + wick.executor.memory ${executorMb} MiB + 2 × wick.reducer.maxSizeFetchToMem ${FETCH_TO_MEM_MB} MiB)`,
  );
  console.log(
    `Goal vsSingleProcess ≤ ${GOAL_VS_SINGLE}: ${ratios.vsSingleProcess <= GOAL_VS_SINGLE ? 'met' : 'NOT met'}; vsSortUniq < 1: ${ratios.vsSortUniq < 1 ? 'met' : 'NOT met'}. Load: ${machineLoad()}`,
  );
  const figures: Record<string, number> = {
    wickMs: round(wick, 1),
    shuffleBytesWritten: metrics.shuffleWrite?.bytesWritten ?? 0,
    shuffleBytesRead: read(metrics),
    shuffleBytesOnDisk: shuffle.bytes,
    spills: metrics.spillCount ?? 0,
    partitions,
    inputMiB: mb,
    'noCombine.executorMiB': executorMb,
  };
  for (const [label, xs] of Object.entries(rss))
    for (const [i, x] of xs.entries()) figures[`peakRssMiB.${label}.executor${i}`] = round(x, 1);
  for (const [label, v] of Object.entries(variant)) {
    figures[`noCombine.${label}.ms`] = round(v.ms, 1);
    figures[`noCombine.${label}.shuffleBytesWritten`] = v.metrics.shuffleWrite?.bytesWritten ?? 0;
    figures[`noCombine.${label}.shuffleBytesRead`] = read(v.metrics);
    figures[`noCombine.${label}.spills`] = v.metrics.spillCount ?? 0;
    for (const [i, x] of v.rss.entries())
      figures[`noCombine.${label}.peakRssMiB.executor${i}`] = round(x, 1);
    for (const [i, x] of v.startRss.entries())
      figures[`noCombine.${label}.startRssMiB.executor${i}`] = round(x, 1);
  }
  const path = writeResults('wordcount', {
    goals,
    figures,
    baseline: { singleProcessMs: round(single, 1), sortUniqMs: round(su, 1) },
    ratios,
  });
  console.log(`Wrote ${path}`);
}

await runBenchmark('wordcount', main, WATCHDOG_MS);
