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
  if (e.masters) s.masters = e.masters;
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
  // A driver relaunched under a new id (SPARK-19900) ends RELAUNCHING, a state that an active
  // driver has too (its worker restarting it): what ended it is the run that names it.
  const replaced = new Set<string>();
  for (const d of e.drivers ?? []) if (d.relaunchedFrom) replaced.add(d.relaunchedFrom);
  for (const d of e.drivers ?? []) {
    const finished =
      d.state === 'FINISHED' ||
      d.state === 'KILLED' ||
      d.state === 'FAILED' ||
      d.state === 'ERROR' ||
      (d.state === 'RELAUNCHING' &&
        (replaced.has(d.id) || s.activeDrivers.some((x) => x.relaunchedFrom === d.id)));
    remove(finished ? s.activeDrivers : s.completedDrivers, d.id);
    upsert(finished ? s.completedDrivers : s.activeDrivers, d);
  }
  for (const id of replaced) {
    const old = s.activeDrivers.find((x) => x.id === id);
    if (old?.state === 'RELAUNCHING') {
      remove(s.activeDrivers, id);
      upsert(s.completedDrivers, old);
    }
  }
  for (const id of e.removedDrivers ?? []) {
    remove(s.activeDrivers, id);
    remove(s.completedDrivers, id);
  }
}

/**
 * A new state object for `e` to be applied to, sharing with `s` all that the event leaves as it
 * is: applyEvent replaces entries and never changes one, so only the lists it changes are copied
 * (shallowly, each keeping its index). For a mirror that hands out a new object per change, so
 * that what compares by identity sees it (the dashboard's store), without a deep copy of 10,000
 * workers per push. Neither `s` nor what it shares may be changed afterwards; `s` stays as it was.
 */
export function copyForEvent(s: State, e: MessageOf<typeof MasterStateEvent>): State {
  const next = { ...s };
  if (e.workers?.length || e.removedWorkers?.length) next.workers = copyList(s.workers);
  if (e.apps?.length || e.removedApps?.length) {
    next.activeApps = copyList(s.activeApps);
    next.completedApps = copyList(s.completedApps);
  }
  if (e.drivers?.length || e.removedDrivers?.length) {
    next.activeDrivers = copyList(s.activeDrivers);
    next.completedDrivers = copyList(s.completedDrivers);
  }
  return next;
}

/**
 * A copy of a list that takes its index along: the original is never changed again, so the copy
 * may keep the index up to date alone (find() checks it against the list anyway).
 */
function copyList<T extends object>(list: T[]): T[] {
  const copy = list.slice();
  const index = indexes.get(list);
  if (index) indexes.set(copy, index);
  return copy;
}

/**
 * Where each id sits in a list, kept beside the list: a cluster of 10,000 workers registering one
 * by one would otherwise cost a scan of the list per event (quadratic in all). The index is
 * rebuilt whenever the list was changed behind its back (its length no longer matches).
 */
const indexes = new WeakMap<object, Map<string, number>>();

function rebuild<T extends { id: string }>(list: T[]): Map<string, number> {
  const index = new Map(list.map((x, i) => [x.id, i]));
  indexes.set(list, index);
  return index;
}

/** The position of `id` in `list`, or -1; trusts the kept index only when it checks out. */
function find<T extends { id: string }>(list: T[], id: string): number {
  let index = indexes.get(list);
  if (!index || index.size !== list.length) index = rebuild(list);
  let i = index.get(id);
  if (i !== undefined && list[i]?.id !== id) i = rebuild(list).get(id);
  return i ?? -1;
}

function upsert<T extends { id: string }>(list: T[], item: T): void {
  const i = find(list, item.id);
  if (i >= 0) {
    list[i] = item;
    return;
  }
  list.push(item);
  indexes.get(list)?.set(item.id, list.length - 1);
}

function remove<T extends { id: string }>(list: T[], id: string): void {
  const i = find(list, id);
  if (i < 0) return;
  list.splice(i, 1);
  indexes.delete(list);
}
