/**
 * The master's memory for one application's summary (its AppStatusStore), after a job of `tasks`
 * tasks, each reported one by one (the worst case: a driver reports at most 1,000 tasks a second
 * one by one and merges the rest into counts, statusReport.ts), bounded by `retainedTasks`. Heap
 * used after a full GC, with the store held, minus before it was made.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { AppStatusStore } from '../../backend/appstatus/AppStatusStore.js';
import type { WickListenerEvent } from '../../backend/protocol/listener.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapUsed(): number {
  gc();
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

/**
 * Bytes of heap one store holds after a `tasks`-task job, keeping at most `retainedTasks`: the
 * heap of `copies` such stores held at once, divided by `copies`. A small store alone (a smoke
 * run's 200 tasks) is within the heap's own noise and could read 0 (ci-l); many read as one.
 */
export function summaryBytes(tasks: number, retainedTasks: number, copies = 1): number {
  const before = heapUsed();
  const stores = Array.from({ length: copies }, () => filledStore(tasks, retainedTasks));
  const after = heapUsed();
  // Held until measured: the stores are what is counted.
  if (stores.some((s) => s.jobList().length !== 1)) throw new Error('the job was not kept');
  return Math.max(0, after - before) / copies;
}

function filledStore(tasks: number, retainedTasks: number): AppStatusStore {
  const store = new AppStatusStore({
    jobs: 1000,
    stages: 1000,
    tasks: retainedTasks,
    deadExecutors: 100,
  });
  const t0 = Date.UTC(2026, 0, 1);
  const post = (e: WickListenerEvent) => store.post(e);
  post({
    event: 'WickListenerApplicationStart',
    appId: 'app-bench',
    appName: 'b',
    time: t0,
    user: 'u',
  });
  for (const id of ['0', '1'])
    post({ event: 'WickListenerExecutorAdded', executorId: id, host: '127.0.0.1', cores: 1 });
  post({ event: 'WickListenerJobStart', jobId: 0, stageIds: [0], time: t0 });
  post({
    event: 'WickListenerStageSubmitted',
    stageId: 0,
    stageAttemptId: 0,
    jobId: 0,
    name: 'foreach',
    numTasks: tasks,
    time: t0,
  });
  for (let i = 0; i < tasks; i++) {
    const executorId = String(i % 2);
    post({
      event: 'WickListenerTaskStart',
      taskId: i,
      stageId: 0,
      stageAttemptId: 0,
      index: i,
      attempt: 0,
      executorId,
      time: t0 + i,
    });
    post({
      event: 'WickListenerTaskEnd',
      taskId: i,
      stageId: 0,
      stageAttemptId: 0,
      index: i,
      executorId,
      state: 'FINISHED',
      durationMs: 1,
    });
  }
  post({
    event: 'WickListenerStageCompleted',
    stageId: 0,
    stageAttemptId: 0,
    name: 'foreach',
    numTasks: tasks,
    time: t0 + tasks,
  });
  post({ event: 'WickListenerJobEnd', jobId: 0, result: 'JobSucceeded', time: t0 + tasks });
  return store;
}
