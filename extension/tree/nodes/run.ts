/**
 * A run of an earlier local cluster (before the window reloaded, or VS Code restarted), as the
 * agent kept it: how it ended (and why, when its cluster ended under it), its failure, its
 * driver output and its executors' logs where those files are still there, and "logs removed"
 * where they are not.
 */
import { duration, type Item, lower, stateIcon } from './item.js';
import type { Node } from './node.js';

type R = Extract<Node, { kind: 'run' }>;
type F = Extract<Node, { kind: 'file' }>;

export function runItem(n: R): Item {
  const r = n.run;
  const took = r.endTime !== undefined ? ` · ${duration(r.endTime - r.startTime)}` : '';
  const jobs = r.jobs
    ? `Jobs: ${r.jobs.succeeded} succeeded, ${r.jobs.failed} failed${r.jobs.running ? `, ${r.jobs.running} unfinished` : ''}`
    : 'Jobs: no event log read';
  return {
    id: `run:${r.appId}`,
    label: r.name,
    description: `${r.state}${r.message ? `: ${r.message}` : took} · earlier session · ${r.appId}`,
    tooltip: [
      `${r.name} (${r.appId})`,
      `State: ${r.state}${r.message ? ` — ${r.message}` : ''}`,
      "From an earlier session of this folder's local cluster",
      `Started: ${new Date(r.startTime).toLocaleString()}`,
      ...(r.endTime !== undefined ? [`Ended: ${new Date(r.endTime).toLocaleString()}`] : []),
      jobs,
      ...(r.failure ? [`Failed: ${r.failure.message}`] : []),
      ...(r.eventLog ? [`Event log: ${r.eventLog}`] : []),
    ].join('\n'),
    icon: stateIcon[r.state] ?? { id: 'history' },
    contextValue: `wick.run.${lower(r.state)}`,
    collapsible: 'collapsed',
  };
}

export function runChildren(n: R): Node[] {
  const r = n.run;
  const out: Node[] = [];
  if (r.failure) out.push({ kind: 'failure', appId: r.appId, name: r.name, failure: r.failure });
  if (r.output?.exists)
    out.push({
      kind: 'file',
      id: `output:${r.appId}`,
      label: 'driver output',
      path: r.output.path,
      icon: 'terminal',
    });
  else if (r.output)
    out.push({
      kind: 'message',
      id: `output-removed:${r.appId}`,
      text: 'driver output removed',
      severity: 'note',
    });
  for (const f of r.logs.files)
    out.push({
      kind: 'file',
      id: `log:${r.appId}/${f.execId}/${f.stream}`,
      label: `executor ${f.execId} · ${f.stream}`,
      path: f.path,
      icon: f.stream === 'stdout' ? 'output' : 'warning',
    });
  if (r.logs.removed)
    out.push({
      kind: 'message',
      id: `logs-removed:${r.appId}`,
      text: 'logs removed',
      detail: `The executors' logs were in ${r.logs.dir}, which is gone (the extension keeps the work dirs of the last few local clusters)`,
      severity: 'note',
    });
  return out;
}

export function fileItem(n: F, parentId: string): Item {
  return {
    id: `${parentId}:${n.id}`,
    label: n.label,
    tooltip: n.path,
    icon: { id: n.icon },
    contextValue: 'wick.file',
    collapsible: 'none',
    command: { command: 'wick.openRunFile', title: 'Open', arguments: [n] },
  };
}
