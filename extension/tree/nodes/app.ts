import { appWaitingReason } from '../../submit/waitingReasons.js';
import { cores, duration, type Item, lower, mb, stateIcon } from './item.js';
import { progressNodes, tasksText } from './job.js';
import type { Model, Node } from './node.js';

type A = Extract<Node, { kind: 'app' }>;

export function appItem(n: A, m: Model): Item {
  const a = n.app;
  const running = a.executors.filter((e) => e.state === 'RUNNING').length;
  const took = duration((a.endTime ?? m.now) - a.startTime);
  const why = appWaitingReason(a);
  const failed = a.lastExecutorFailure;
  // While none runs, the failure is why: it goes in the description, where it is seen.
  const failing =
    failed && running === 0 && !isFinished(a.state)
      ? ` · executors failing: ${lastLine(failed.message)}`
      : '';
  const tooltip = [
    `${a.name} (${a.id})`,
    `State: ${a.state}${why ? ` — ${why}` : ''}`,
    `User: ${a.user}`,
    `Cores: ${a.coresGranted}${a.maxCores ? ` of max ${a.maxCores}` : ''}`,
    `Memory per executor: ${mb(a.memoryPerExecutorMB)}`,
    `Executors: ${running} running, ${a.removedExecutors.length} ended`,
    `Duration: ${took}`,
    ...(a.progress ? [jobsLine(a.progress)] : []),
    ...(a.failure ? [`Failed: ${failureText(a.failure)}`] : []),
    ...(failed
      ? [
          `Last executor failure (executor ${failed.execId} on ${failed.workerHostPort}):`,
          failed.message,
        ]
      : []),
  ].join('\n');
  return {
    id: `app:${a.id}`,
    label: a.name,
    // State and cores first: what a glance wants; the id last, where a cut costs least.
    description: `${
      why ? `WAITING: ${why}` : `${a.state} · ${cores(a.coresGranted)} · ${took}`
    }${failing} · ${a.id}`,
    tooltip,
    icon: stateIcon[a.state] ?? { id: 'circle-outline' },
    contextValue: `wick.app.${lower(a.state)}`,
    collapsible: 'collapsed',
  };
}

/** "Jobs: 1 running (40/100 tasks), 2 succeeded, 0 failed" */
function jobsLine(p: NonNullable<A['app']['progress']>): string {
  const first = p.activeJobs[0];
  const running = first ? ` (job ${first.jobId}: ${tasksText(first.counts)})` : '';
  return `Jobs: ${p.jobs.active} running${running}, ${p.jobs.succeeded} succeeded, ${p.jobs.failed} failed`;
}

/** What the driver said when its application failed, and the line of the user's code. */
function failureText(f: NonNullable<A['app']['failure']>): string {
  const at = f.location ? `\nat ${f.location.file}:${f.location.line}:${f.location.column}` : '';
  return `${f.message}${at}`;
}

function isFinished(state: string): boolean {
  return state !== 'WAITING' && state !== 'RUNNING';
}

/** The end of a quoted stderr is where the error usually is. */
function lastLine(message: string): string {
  const lines = message.trimEnd().split('\n');
  return lines[lines.length - 1] ?? '';
}

export function appChildren(n: A, m?: Model): Node[] {
  const a = n.app;
  const output: Node[] = m?.outputs?.has(a.id) ? [{ kind: 'output', appId: a.id }] : [];
  const failure: Node[] = a.failure
    ? [{ kind: 'failure', appId: a.id, name: a.name, failure: a.failure }]
    : [];
  return [
    ...failure,
    ...output,
    ...progressNodes(a),
    ...[...a.executors, ...a.removedExecutors]
      .sort((x, y) => x.id - y.id)
      .map((exec): Node => ({ kind: 'executor', exec, app: a, under: 'app' })),
  ];
}
