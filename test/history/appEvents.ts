/** A small application's listener events, as a driver's bus posts them: two jobs, one failing. */
import type { WickListenerEvent } from '../../backend/protocol/listener.js';

export function appEvents(
  appId: string,
  t0 = Date.UTC(2026, 11, 1, 12),
  end = true,
): WickListenerEvent[] {
  const e: WickListenerEvent[] = [
    {
      event: 'WickListenerApplicationStart',
      appId,
      appName: `name of ${appId}`,
      time: t0,
      user: 'ann',
    },
    { event: 'WickListenerExecutorAdded', executorId: '0', host: '127.0.0.1', cores: 2 },
    { event: 'WickListenerJobStart', jobId: 0, stageIds: [0, 1], time: t0 + 10 },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 0,
      stageAttemptId: 0,
      jobId: 0,
      name: 'map',
      numTasks: 2,
      time: t0 + 11,
    },
  ];
  for (const i of [0, 1]) {
    e.push(
      {
        event: 'WickListenerTaskStart',
        taskId: i,
        stageId: 0,
        stageAttemptId: 0,
        index: i,
        attempt: 0,
        executorId: '0',
        time: t0 + 12,
      },
      {
        event: 'WickListenerTaskEnd',
        taskId: i,
        stageId: 0,
        stageAttemptId: 0,
        index: i,
        executorId: '0',
        state: 'FINISHED',
        durationMs: 5,
      },
    );
  }
  e.push(
    {
      event: 'WickListenerStageCompleted',
      stageId: 0,
      stageAttemptId: 0,
      name: 'map',
      numTasks: 2,
      time: t0 + 20,
    },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 1,
      stageAttemptId: 0,
      jobId: 0,
      name: 'result',
      numTasks: 1,
      time: t0 + 21,
    },
    {
      event: 'WickListenerTaskStart',
      taskId: 2,
      stageId: 1,
      stageAttemptId: 0,
      index: 0,
      attempt: 0,
      executorId: '0',
      time: t0 + 22,
    },
    {
      event: 'WickListenerTaskEnd',
      taskId: 2,
      stageId: 1,
      stageAttemptId: 0,
      index: 0,
      executorId: '0',
      state: 'FINISHED',
      durationMs: 3,
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: 1,
      stageAttemptId: 0,
      name: 'result',
      numTasks: 1,
      time: t0 + 30,
    },
    { event: 'WickListenerJobEnd', jobId: 0, result: 'JobSucceeded', time: t0 + 31 },
    // Job 1 reuses stage 0's shuffle (skipped) and fails in its result stage.
    { event: 'WickListenerJobStart', jobId: 1, stageIds: [0, 2], time: t0 + 40 },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 2,
      stageAttemptId: 0,
      jobId: 1,
      name: 'result 2',
      numTasks: 1,
      time: t0 + 41,
    },
    {
      event: 'WickListenerTaskStart',
      taskId: 3,
      stageId: 2,
      stageAttemptId: 0,
      index: 0,
      attempt: 0,
      executorId: '0',
      time: t0 + 42,
    },
    {
      event: 'WickListenerTaskEnd',
      taskId: 3,
      stageId: 2,
      stageAttemptId: 0,
      index: 0,
      executorId: '0',
      state: 'FAILED',
      error: 'Error: boom',
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: 2,
      stageAttemptId: 0,
      name: 'result 2',
      numTasks: 1,
      time: t0 + 50,
      failureReason: 'Task 0 failed: Error: boom',
    },
    {
      event: 'WickListenerJobEnd',
      jobId: 1,
      result: 'JobFailed',
      error: 'Job aborted: Error: boom',
      time: t0 + 51,
    },
  );
  if (end) e.push({ event: 'WickListenerApplicationEnd', time: t0 + 60 });
  return e;
}
