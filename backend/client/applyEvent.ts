import type { MessageOf } from '../protocol/registry.js';
import type { MasterStateEvent, MasterStateResponse } from '../protocol/state.js';

/**
 * Applying a pushed MasterStateEvent to a copy of the master's state. Pure and free of Node APIs:
 * the CLI's mirror, the agent and the dashboard in the browser all use this one function.
 */

type State = MessageOf<typeof MasterStateResponse>;

/** Replaces entries by id, moves applications and drivers between active and completed. */
export function applyEvent(s: State, e: MessageOf<typeof MasterStateEvent>): void {
  s.seq = e.seq;
  if (e.status) s.status = e.status;
  for (const w of e.workers ?? []) upsert(s.workers, w);
  for (const id of e.removedWorkers ?? []) remove(s.workers, id);
  for (const a of e.apps ?? []) {
    const finished = a.state !== 'WAITING' && a.state !== 'RUNNING';
    remove(finished ? s.activeApps : s.completedApps, a.id);
    upsert(finished ? s.completedApps : s.activeApps, a);
  }
  for (const id of e.removedApps ?? []) {
    remove(s.activeApps, id);
    remove(s.completedApps, id);
  }
  for (const d of e.drivers ?? []) {
    const finished =
      d.state === 'FINISHED' || d.state === 'KILLED' || d.state === 'FAILED' || d.state === 'ERROR';
    remove(finished ? s.activeDrivers : s.completedDrivers, d.id);
    upsert(finished ? s.completedDrivers : s.activeDrivers, d);
  }
  for (const id of e.removedDrivers ?? []) {
    remove(s.activeDrivers, id);
    remove(s.completedDrivers, id);
  }
}

function upsert<T extends { id: string }>(list: T[], item: T): void {
  const i = list.findIndex((x) => x.id === item.id);
  if (i >= 0) list[i] = item;
  else list.push(item);
}

function remove<T extends { id: string }>(list: T[], id: string): void {
  const i = list.findIndex((x) => x.id === id);
  if (i >= 0) list.splice(i, 1);
}
