import type { TaskMetrics as WireTaskMetrics } from '../../protocol/task.js';

/**
 * What a task measured (Spark's TaskMetrics), as StatusUpdate.metrics carries it: written out
 * here as a plain interface, for the driver program's types (it names no schema library).
 */
export interface TaskMetrics {
  /** A map task's output: its data file's bytes and records. */
  shuffleWrite?: { bytesWritten: number; recordsWritten: number };
  /**
   * A reduce task's input: bytes of blocks its own executor wrote (local) and others' (remote),
   * those fetched to a file rather than memory, records parsed, and how long it waited for them.
   */
  shuffleRead?: {
    localBytesRead: number;
    remoteBytesRead: number;
    remoteBytesReadToDisk: number;
    recordsRead: number;
    fetchWaitTimeMs: number;
  };
  /** Spills to disk of its shuffle buffers, their estimated size in memory and bytes written. */
  spillCount?: number;
  memoryBytesSpilled?: number;
  diskBytesSpilled?: number;
}

// The wire's schema and this interface say the same (a compile error here if they drift).
const sameAsWire: (m: WireTaskMetrics) => TaskMetrics = (m) => m;
const wireAsSame: (m: TaskMetrics) => WireTaskMetrics = (m) => m;
void sameAsWire;
void wireAsSame;

/** Counts one spill of a task: its estimated size in memory and the bytes it wrote. */
export function noteSpill(m: TaskMetrics, memoryBytes: number, diskBytes: number): void {
  m.spillCount = (m.spillCount ?? 0) + 1;
  m.memoryBytesSpilled = (m.memoryBytesSpilled ?? 0) + Math.round(memoryBytes);
  m.diskBytesSpilled = (m.diskBytesSpilled ?? 0) + diskBytes;
}

/** The records a reduce task read, added to its fetch's figures (set by the executor). */
export function noteRecordsRead(m: TaskMetrics, records: number): void {
  m.shuffleRead ??= noShuffleRead();
  m.shuffleRead.recordsRead += records;
}

function noShuffleRead(): NonNullable<TaskMetrics['shuffleRead']> {
  return {
    localBytesRead: 0,
    remoteBytesRead: 0,
    remoteBytesReadToDisk: 0,
    recordsRead: 0,
    fetchWaitTimeMs: 0,
  };
}

/** Sums task metrics (a driver program's totals over tasks). */
export function addTaskMetrics(into: TaskMetrics, m: TaskMetrics | undefined): TaskMetrics {
  if (!m) return into;
  if (m.shuffleWrite) {
    into.shuffleWrite ??= { bytesWritten: 0, recordsWritten: 0 };
    into.shuffleWrite.bytesWritten += m.shuffleWrite.bytesWritten;
    into.shuffleWrite.recordsWritten += m.shuffleWrite.recordsWritten;
  }
  if (m.shuffleRead) {
    into.shuffleRead ??= noShuffleRead();
    const r = into.shuffleRead;
    r.localBytesRead += m.shuffleRead.localBytesRead;
    r.remoteBytesRead += m.shuffleRead.remoteBytesRead;
    r.remoteBytesReadToDisk += m.shuffleRead.remoteBytesReadToDisk;
    r.recordsRead += m.shuffleRead.recordsRead;
    r.fetchWaitTimeMs += m.shuffleRead.fetchWaitTimeMs;
  }
  if (m.spillCount !== undefined) into.spillCount = (into.spillCount ?? 0) + m.spillCount;
  if (m.memoryBytesSpilled !== undefined)
    into.memoryBytesSpilled = (into.memoryBytesSpilled ?? 0) + m.memoryBytesSpilled;
  if (m.diskBytesSpilled !== undefined)
    into.diskBytesSpilled = (into.diskBytesSpilled ?? 0) + m.diskBytesSpilled;
  return into;
}
