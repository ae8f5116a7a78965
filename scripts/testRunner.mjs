// Runs test files with node's test runner, two at a time, each in its own process, and reports
// them as one run (one spec report, one summary). Started by scripts/test.mjs with the --imports
// every test file needs (its children inherit them).
//
// Why not `node --test --test-timeout=…`: that bound is one number for every file, and it cut the
// VS Code file (which asks 15 minutes for itself) at 5. Here each file's bound is the longest
// `timeout:` its own text asks for, and never less than the default; a file that asks nothing is
// still stopped after the default, so a hang costs no more than that.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

// WICK_TEST_FILE_TIMEOUT_MS: for the runner's own test, which cannot wait five minutes.
const DEFAULT_FILE_TIMEOUT_MS = Number(process.env.WICK_TEST_FILE_TIMEOUT_MS) || 300_000;
// WICK_TEST_CONCURRENCY: files at a time (default 2, for a 2-core machine).
const CONCURRENCY = Number(process.env.WICK_TEST_CONCURRENCY) || 2;
const SUMMARY = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/;

/** The longest timeout a file's tests ask for (`timeout: 900_000`), or the default if longer. */
function fileTimeoutMs(text) {
  let ms = DEFAULT_FILE_TIMEOUT_MS;
  for (const m of text.matchAll(/\btimeout:\s*([\d_]+)\b/g)) {
    ms = Math.max(ms, Number(m[1].replaceAll('_', '')));
  }
  return ms;
}

/** Every event of one file's run, once it has ended (a file's report stays in one piece). */
async function runFile(file) {
  const events = [];
  const timeout = fileTimeoutMs(readFileSync(file, 'utf8'));
  const started = performance.now();
  for await (const event of run({ files: [file], timeout })) events.push(event);
  wallMs.set(file, performance.now() - started);
  return events;
}

/** Each file's wall time, from its process's start to its end (its tests' own times leave out its start). */
const wallMs = new Map();
const SLOWEST_SHOWN = 15;

/** The events of every file, in the order the files end, then one summary for the whole run. */
async function* allEvents(files) {
  const started = performance.now();
  const totals = { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
  const queue = [...files];
  const running = new Map();
  const next = () => {
    const file = queue.shift();
    running.set(
      file,
      runFile(file).then((events) => ({ file, events })),
    );
  };
  while (running.size < CONCURRENCY && queue.length > 0) next();
  while (running.size > 0) {
    const { file, events } = await Promise.race(running.values());
    running.delete(file);
    if (queue.length > 0) next();
    for (const event of events) {
      // Each run ends with its own summary; the whole run gets one, below.
      const m =
        event.type === 'test:diagnostic' &&
        event.data.nesting === 0 &&
        SUMMARY.exec(event.data.message);
      if (m) {
        if (m[1] in totals) totals[m[1]] += Number(m[2]);
      } else {
        yield event;
      }
    }
  }
  totals.duration_ms = performance.now() - started;
  // Where the run's time went, for whoever trims it: the slowest files, and every file's sum.
  const slowest = [...wallMs].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_SHOWN);
  const sum = [...wallMs.values()].reduce((a, b) => a + b, 0);
  yield diagnostic(
    `files ${wallMs.size}, ${(sum / 1000).toFixed(0)} s of file time in all; the slowest:`,
  );
  for (const [file, ms] of slowest)
    yield diagnostic(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
  for (const [name, value] of Object.entries(totals)) yield diagnostic(`${name} ${value}`);
  // A run that ran no test passed nothing.
  process.exitCode = totals.fail + totals.cancelled > 0 || totals.tests === 0 ? 1 : 0;
}

function diagnostic(message) {
  return { type: 'test:diagnostic', data: { nesting: 0, message } };
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: testRunner.mjs FILE.test.ts ...');
  process.exit(2);
}
Readable.from(allEvents(files)).pipe(new spec()).pipe(process.stdout);
