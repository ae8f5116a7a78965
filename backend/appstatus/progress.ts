import { type AppProgress, MAX_PROGRESS_ENTRIES } from '../protocol/state.js';
import type { AppStatusStore, TaskCounts } from './AppStatusStore.js';

/**
 * An application's progress in brief (protocol/state.ts AppProgress): counts of its jobs and
 * stage attempts by status, and the first running ones with their task counts. What a master
 * pushes to its subscribers once per report, bounded whatever the application runs.
 */
export function progressOf(store: AppStatusStore): AppProgress {
  const p: AppProgress = {
    jobs: { active: 0, succeeded: 0, failed: 0 },
    stages: { active: 0, complete: 0, failed: 0 },
    activeJobs: [],
    activeStages: [],
    lastUpdated: store.lastUpdated,
  };
  const jobs = store.jobList().reverse();
  for (const j of jobs) {
    if (j.status === 'RUNNING') {
      p.jobs.active++;
      if (p.activeJobs.length < MAX_PROGRESS_ENTRIES) {
        p.activeJobs.push({
          jobId: j.jobId,
          submissionTime: j.submissionTime,
          stageIds: j.stageIds.slice(0, MAX_PROGRESS_ENTRIES),
          counts: counts(j.counts),
        });
      }
    } else if (j.status === 'SUCCEEDED') p.jobs.succeeded++;
    else p.jobs.failed++;
  }
  for (const s of store.stageList().reverse()) {
    if (s.status === 'ACTIVE') {
      p.stages.active++;
      if (p.activeStages.length < MAX_PROGRESS_ENTRIES) {
        p.activeStages.push({
          stageId: s.stageId,
          attemptId: s.attemptId,
          name: s.name,
          submissionTime: s.submissionTime,
          counts: counts(s.counts),
        });
      }
    } else if (s.status === 'COMPLETE') p.stages.complete++;
    else p.stages.failed++;
  }
  return p;
}

function counts(c: TaskCounts): TaskCounts {
  return { ...c };
}
