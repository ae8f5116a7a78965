/**
 * The runs of earlier local clusters as the Applications view shows them: each record (runStore)
 * with what is still on disk (its driver output, its executors' logs) and what its event log says
 * (how it ended, its jobs). The event log has the last word on how a run ended when the record
 * had not seen its end; a run whose cluster ended under it keeps its KILLED and the message why.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import type { LogStream, PastRun } from './protocol.js';
import type { RunRecord, RunStore } from './runStore.js';

/** Runs whose jobs are read from their event log (each a replay of the log); older ones show none. */
const WITH_JOBS = 20;

export async function pastRuns(
  store: RunStore,
  currentClusterDir: string | undefined,
  history: HistoryProvider | undefined,
): Promise<PastRun[]> {
  const records = store.all().filter((r) => r.clusterDir !== currentClusterDir);
  if (history) await history.scan().catch(() => undefined);
  const out: PastRun[] = [];
  for (const [i, r] of records.entries()) out.push(await pastRun(store, r, history, i < WITH_JOBS));
  return out;
}

async function pastRun(
  store: RunStore,
  r: RunRecord,
  history: HistoryProvider | undefined,
  withJobs: boolean,
): Promise<PastRun> {
  const run: PastRun = {
    appId: r.appId,
    name: r.name,
    state: asEnded(r.state),
    startTime: r.startTime,
    ...(r.endTime !== undefined ? { endTime: r.endTime } : {}),
    ...(r.message ? { message: r.message } : {}),
    ...(r.failure ? { failure: r.failure } : {}),
    ...(r.file ? { file: r.file } : {}),
    logs: executorLogs(r),
  };
  if (r.outputId) {
    const path = store.outputPath(r.outputId);
    run.output = { path, exists: existsSync(path) };
  }
  const listing = history?.application(r.appId);
  if (listing && history) {
    run.eventLog = listing.logPath;
    // The master's last word was not an end (the window went first): the log may have one. An
    // end the master gave (a KILLED by the user: its driver logs a failed job) stays.
    if (listing.completed && run.state === 'UNKNOWN') {
      run.state = listing.failure ? 'FAILED' : 'FINISHED';
      if (listing.endTime !== undefined) run.endTime = listing.endTime;
    }
    if (listing.failure && !run.failure && run.state === 'FAILED')
      run.failure = { message: listing.failure.slice(0, 4000) };
    if (withJobs) {
      const loaded = await history.load(r.appId).catch(() => undefined);
      const t = loaded?.summary.totals;
      if (t)
        run.jobs = { succeeded: t.jobsSucceeded, failed: t.jobsFailed, running: t.jobsRunning };
    }
  }
  return run;
}

function asEnded(state: string): PastRun['state'] {
  return state === 'FINISHED' || state === 'FAILED' || state === 'KILLED' ? state : 'UNKNOWN';
}

/** `<clusterDir>/<appId>/<execId>/{stdout,stderr}` that still exist. */
function executorLogs(r: RunRecord): PastRun['logs'] {
  const dir = join(r.clusterDir, r.appId);
  const files: PastRun['logs']['files'] = [];
  let execs: string[] = [];
  try {
    execs = readdirSync(dir).filter((n) => /^\d+$/.test(n));
  } catch {}
  for (const e of execs.sort((a, b) => Number(a) - Number(b)))
    for (const stream of ['stdout', 'stderr'] as LogStream[]) {
      const path = join(dir, e, stream);
      if (existsSync(path)) files.push({ execId: Number(e), stream, path });
    }
  return { dir, removed: files.length === 0, files };
}
