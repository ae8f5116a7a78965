/**
 * An application's store rebuilt from its event log (Spark's history provider replaying a log
 * into an AppStatusStore): each line is checked against the listener events' schema, a line that
 * is not one is skipped and counted, and a log cut by a crash gives what came before the cut.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { parseEventLogName } from '../eventlog/eventLogFiles.js';
import { type EventLogProblem, readEventLog } from '../eventlog/readEventLog.js';
import { WickListenerEvent } from '../protocol/listener.js';
import { AppStatusStore, DEFAULT_RETENTION, type Retention } from './AppStatusStore.js';

let checker: ReturnType<typeof TypeCompiler.Compile<typeof WickListenerEvent>> | undefined;

export interface Replayed {
  store: AppStatusStore;
  /** Whether the log says the application ended (its ApplicationEnd, or no ….inprogress). */
  completed: boolean;
  /** Lines that were not listener events, and the problems that ended the read. */
  skipped: number;
  problems: EventLogProblem[];
}

/** The path of `appId`'s log in `dir` (a single file, plain or gzip, or a rolled folder). */
export async function findEventLog(
  dir: string,
  appId: string,
): Promise<{ path: string; inProgress: boolean } | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    const entry = parseEventLogName(name);
    if (entry?.appId !== appId) continue;
    return {
      path: join(dir, name),
      inProgress: entry.kind === 'file' ? entry.inProgress : false,
    };
  }
  return undefined;
}

export async function replayEventLog(
  path: string,
  retention: Retention = DEFAULT_RETENTION,
): Promise<Replayed> {
  checker ??= TypeCompiler.Compile(WickListenerEvent);
  const store = new AppStatusStore(retention);
  const problems: EventLogProblem[] = [];
  let skipped = 0;
  for await (const line of readEventLog(path, { onProblem: (p) => problems.push(p) })) {
    if (checker.Check(line)) store.post(line);
    else skipped++;
  }
  return { store, completed: store.app.endTime !== undefined, skipped, problems };
}
