/**
 * Application ids that stay unique across the masters whose applications log into one event log
 * dir. Spark's ids (`app-yyyyMMddHHmmss-NNNN`) are unique per master only: two local clusters
 * started in the same second both give `app-<that second>-0000`, and the second driver then
 * finds its event log "exists already". Spark keeps the id's shape and the per-master counter;
 * so does Wick, and a master that knows where its applications log claims each id there before
 * giving it: an empty file `.app-ids/<id>`, created exclusively (`wx`), so that of two masters
 * claiming one id at once exactly one gets it, before any driver has written a line. An id is
 * also refused when a log of that name exists (an earlier master's, a clock set back). The dot
 * folder is no log's name: the history service skips it (logFiles.ts).
 *
 * Claims only matter while a master could still make the same id, that is within the second its
 * name carries: those older than CLAIM_KEPT_MS are removed now and then, so the folder stays small.
 */
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkAppIdForFile, rollingDirName, singleFileName } from './eventLogFiles.js';

export const CLAIMS_DIR = '.app-ids';
/** How long a claim is kept: far past the second it was made in. */
export const CLAIM_KEPT_MS = 60 * 60 * 1000;
/** How often old claims are looked for. */
const PRUNE_EVERY_MS = 60 * 1000;

export interface AppIdClaims {
  /** True when `id` is now this master's; false when another master or a log has it. */
  claim(id: string): Promise<boolean>;
}

export function appIdClaims(dir: string, now: () => number = Date.now): AppIdClaims {
  const claimsDir = join(dir, CLAIMS_DIR);
  let lastPrune = Number.NEGATIVE_INFINITY;
  return {
    async claim(id) {
      checkAppIdForFile(id);
      await mkdir(claimsDir, { recursive: true });
      if (now() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = now();
        await prune(claimsDir, now());
      }
      try {
        await writeFile(join(claimsDir, id), '', { flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
      return !(await logExists(dir, id));
    },
  };
}

/** Whether a log of `id` is in `dir`, in any of its layouts (eventLogFiles.ts). */
async function logExists(dir: string, id: string): Promise<boolean> {
  const names = [rollingDirName(id)];
  for (const compressed of [false, true])
    for (const inProgress of [false, true]) names.push(singleFileName(id, compressed, inProgress));
  for (const name of names) {
    try {
      await stat(join(dir, name));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return false;
}

async function prune(claimsDir: string, now: number): Promise<void> {
  for (const name of await readdir(claimsDir)) {
    const path = join(claimsDir, name);
    try {
      if (now - (await stat(path)).mtimeMs > CLAIM_KEPT_MS) await rm(path, { force: true });
    } catch {
      // Removed by another master meanwhile.
    }
  }
}
