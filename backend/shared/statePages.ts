import type { MessageOf } from '../protocol/registry.js';
import {
  type MasterStateEvent,
  type MasterStateResponse,
  stateCursorAfter,
} from '../protocol/state.js';
import { applyEvent } from './applyEvent.js';

/**
 * A master's state read in pages (RequestMasterState with `limit`), and the pushes that cross
 * them. Pure and free of Node APIs, like applyEvent.
 *
 * Each page lists its entries as they were when it was answered (its `seq`), so pages answered at
 * different moments are merged entry by entry, the later listing of an entry winning. A
 * subscriber also gets the changes made while it reads the pages: a change to an entry that a
 * page answered after it listed is older than that listing and is skipped (applied, it would
 * show the entry as it was before, until its next change); any other applies, in order. (An
 * entry that no page listed either came after its page, or went before it — and then the change
 * that removed it follows, so applying every change in order leaves it gone.)
 */

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

export class StatePages {
  private merged: State | undefined;
  /** The seq of the page that last listed each entry, by kind and id (w:…, a:…, d:…). */
  private listedAt: Map<string, number> | undefined = new Map();
  private lastCursor: string | undefined;

  /** The state so far; undefined before the first page. */
  get state(): State | undefined {
    return this.merged;
  }

  /** The seq of the last page added: the header (status, masters) is as of then. */
  get seq(): number {
    return this.merged?.seq ?? 0;
  }

  /**
   * Adds the next page. Throws if its `next` does not move forward: a master that answers the
   * same page again would otherwise keep a client reading for ever.
   */
  add(page: State): void {
    const listedAt = this.listedAt ?? new Map<string, number>();
    for (const w of page.workers) listedAt.set(`w:${w.id}`, page.seq);
    for (const a of [...page.activeApps, ...page.completedApps])
      listedAt.set(`a:${a.id}`, page.seq);
    for (const d of [...page.activeDrivers, ...page.completedDrivers]) {
      listedAt.set(`d:${d.id}`, page.seq);
    }
    this.listedAt = listedAt;
    if (page.next !== undefined) {
      if (this.lastCursor !== undefined && !stateCursorAfter(page.next, this.lastCursor)) {
        throw new Error(
          `The master answered a page ending at ${page.next} after one ending at ${this.lastCursor}: its pages do not move forward`,
        );
      }
      this.lastCursor = page.next;
    }
    const { next: _, ...whole } = page;
    if (!this.merged) {
      this.merged = {
        ...whole,
        workers: [...page.workers],
        activeApps: [...page.activeApps],
        completedApps: [...page.completedApps],
        activeDrivers: [...page.activeDrivers],
        completedDrivers: [...page.completedDrivers],
      };
      return;
    }
    const s = this.merged;
    s.url = page.url;
    s.webUiUrl = page.webUiUrl;
    if (page.masters) s.masters = page.masters;
    else delete s.masters;
    applyEvent(s, {
      type: 'MasterStateEvent',
      seq: page.seq,
      status: page.status,
      workers: page.workers,
      apps: [...page.activeApps, ...page.completedApps],
      drivers: [...page.activeDrivers, ...page.completedDrivers],
    });
  }

  /**
   * Applies a pushed change to the merged state, leaving out what a page listed later than it;
   * false if nothing of it applied (it was older than the state).
   */
  apply(event: Event): boolean {
    const s = this.merged;
    if (!s) return false;
    const listedAt = this.listedAt;
    if (!listedAt) {
      if (event.seq <= s.seq) return false;
      applyEvent(s, event);
      return true;
    }
    if (event.seq > s.seq) {
      // Newer than every page: so is everything after it.
      this.listedAt = undefined;
      applyEvent(s, event);
      return true;
    }
    const newer = (kind: string, id: string) => (listedAt.get(`${kind}:${id}`) ?? -1) < event.seq;
    const seq = s.seq;
    const status = s.status;
    const masters = s.masters;
    applyEvent(s, {
      type: 'MasterStateEvent',
      seq,
      ...(event.workers ? { workers: event.workers.filter((w) => newer('w', w.id)) } : {}),
      ...(event.apps ? { apps: event.apps.filter((a) => newer('a', a.id)) } : {}),
      ...(event.drivers ? { drivers: event.drivers.filter((d) => newer('d', d.id)) } : {}),
      ...(event.removedWorkers
        ? { removedWorkers: event.removedWorkers.filter((id) => newer('w', id)) }
        : {}),
      ...(event.removedApps
        ? { removedApps: event.removedApps.filter((id) => newer('a', id)) }
        : {}),
      ...(event.removedDrivers
        ? { removedDrivers: event.removedDrivers.filter((id) => newer('d', id)) }
        : {}),
    });
    // The last page's header is newer than this change's.
    s.status = status;
    if (masters) s.masters = masters;
    return true;
  }
}
