import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The files whose name matches `name` in every folder under `root`: what tests look for in the
 * workers' local dirs (map outputs, spill files). A folder that goes while it is read (a worker
 * removing an application's dirs) counts as empty.
 */
export function filesUnder(root: string, name: RegExp): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (name.test(e.name)) out.push(join(d, e.name));
    }
  };
  walk(root);
  return out;
}

/** A map output's data file (`shuffle_<shuffleId>_<mapId>_0.data`). */
export const SHUFFLE_DATA = /^shuffle_\d+_\d+_0\.data$/;
