/**
 * The event logs of a folder as the history service sees them before reading any: each log's
 * name, layout, size and modification time. A rolled log (a folder of parts) counts as one log,
 * its size the sum of its parts and its time the newest of theirs, so that "size and time have
 * not changed" means "nothing was written" for both layouts (Spark's FsHistoryProvider keys its
 * listing the same way). Names that are no event log's (a dot file, a stray folder) are left out.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { appStatusName, parseEventLogName, parsePartName } from '../eventlog/eventLogFiles.js';

export interface LogFile {
  /** The name in the folder (a file, or a rolled log's folder). */
  name: string;
  path: string;
  appId: string;
  rolled: boolean;
  compressed: boolean;
  /** Named as running (`….inprogress`, or a rolled log's `appstatus_<id>.inprogress`). */
  inProgress: boolean;
  size: number;
  mtimeMs: number;
}

/** Every event log in `dir`; a folder that does not exist has none. */
export async function listLogFiles(dir: string): Promise<LogFile[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: LogFile[] = [];
  for (const d of entries) {
    if (d.name.startsWith('.')) continue;
    const entry = parseEventLogName(d.name);
    if (!entry) continue;
    const path = join(dir, d.name);
    try {
      if (entry.kind === 'file' && d.isFile()) {
        const s = await stat(path);
        out.push({
          name: d.name,
          path,
          appId: entry.appId,
          rolled: false,
          compressed: entry.compressed,
          inProgress: entry.inProgress,
          size: s.size,
          mtimeMs: s.mtimeMs,
        });
      } else if (entry.kind === 'rolling' && d.isDirectory()) {
        out.push(await rolledLog(d.name, path, entry.appId));
      }
    } catch (err) {
      // Gone between the listing and the stat (a rename at close, the cleaner): not there.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out;
}

async function rolledLog(name: string, path: string, appId: string): Promise<LogFile> {
  const names = await readdir(path);
  const dirStat = await stat(path);
  let size = 0;
  let mtimeMs = dirStat.mtimeMs;
  let compressed = false;
  for (const n of names) {
    const part = parsePartName(n, appId);
    if (!part) continue;
    compressed ||= part.compressed;
    const s = await stat(join(path, n));
    size += s.size;
    mtimeMs = Math.max(mtimeMs, s.mtimeMs);
  }
  return {
    name,
    path,
    appId,
    rolled: true,
    compressed,
    inProgress:
      names.includes(appStatusName(appId, true)) || !names.includes(appStatusName(appId, false)),
    size,
    mtimeMs,
  };
}
