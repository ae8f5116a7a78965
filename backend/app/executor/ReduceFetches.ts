import { rm } from 'node:fs/promises';
import { ShuffleConf } from '../../conf/shuffle.js';
import type { TaskDescription } from '../../protocol/task.js';
import type { RpcEnv } from '../../rpc/index.js';
import type { Logger } from '../../util/log.js';
import { tempFile } from '../shuffle/spillFiles.js';
import type { TaskWithBlocks } from '../task/runTask.js';
import type { ShuffleInput } from '../task/shuffleRead.js';
import {
  fetchPlanLine,
  fetchShuffleBlocks,
  fetchShuffleBlocksToFile,
  shuffleReadsOf,
} from './fetchShuffleBlocks.js';

/**
 * A reduce task's blocks, fetched in the executor's main thread, which has the RpcEnv, to go to
 * the task thread with the task: in memory while the executor's reduce tasks hold no more than
 * wick.reducer.maxSizeFetchToMem in all, else in a file the task reads in chunks. Reduce tasks
 * that may hold fetched blocks at once (fetching, queued or running) are bounded too, to cores + 1
 * slots: a task's blocks are in memory until it ends, and the driver queues more tasks than
 * cores (prefetch), so without a bound the queue alone could hold a whole shuffle.
 */
export class ReduceFetches {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  private readonly held = new Set<number>();
  /** The app's settings (AppConfig) and where its tasks' temporary files go. */
  private maxSizeFetchToMem = ShuffleConf.maxSizeFetchToMem.defaultValue;
  private spillDir: string | undefined;
  /** Bytes of blocks fetched into memory for reduce tasks that have not ended. */
  private inMemory = 0;
  /** Reduce tasks whose blocks are in memory, and their bytes. */
  private readonly fetchedToMemory = new Map<number, number>();
  /** Reduce tasks whose blocks were fetched to a file, deleted as the task ends. */
  private readonly fetchedFiles = new Map<number, string[]>();

  constructor(
    private readonly executor: { executorId: string; appId: string; cores: number },
    private readonly rpcEnv: () => RpcEnv,
    /** The executor's log: what shows the bound holds (test/app/spill.test.ts reads it). */
    private readonly log: Logger,
  ) {
    this.free = executor.cores + 1;
  }

  /** The application's settings, from its AppConfig; no spillDir: never to a file. */
  configure(maxSizeFetchToMem: number, spillDir: string | undefined): void {
    this.maxSizeFetchToMem = maxSizeFetchToMem;
    this.spillDir = spillDir;
  }

  /**
   * Takes a reduce slot for the task (waiting for one) and fetches its blocks onto it. A block
   * that cannot be fetched or verified throws (FetchFailedError), with the slot given back.
   */
  async fetch(task: TaskDescription): Promise<void> {
    await this.takeSlot(task.taskId);
    const t = task as TaskWithBlocks;
    try {
      const started = performance.now();
      const inputs: ShuffleInput[] = [];
      const read = { local: 0, total: 0, toDisk: 0 };
      // A coalesced partition's shuffle parts, one after another, as the task reads them.
      for (const src of shuffleReadsOf(task.source)) {
        this.log.info(fetchPlanLine(src, this.executor.executorId));
        inputs.push(await this.fetchRead(task.taskId, src, read));
      }
      t.shuffleInputs = inputs;
      t.fetchMetrics = {
        localBytesRead: read.local,
        remoteBytesRead: read.total - read.local,
        remoteBytesReadToDisk: read.toDisk,
        recordsRead: 0,
        fetchWaitTimeMs: performance.now() - started,
      };
    } catch (err) {
      this.taskEnded(task.taskId);
      throw err;
    }
  }

  /** The task ended: its slot, its blocks' memory and its fetched files are given back. */
  taskEnded(taskId: number): void {
    if (!this.held.delete(taskId)) return;
    const bytes = this.fetchedToMemory.get(taskId);
    if (bytes !== undefined) {
      this.fetchedToMemory.delete(taskId);
      this.inMemory -= bytes;
    }
    const fetched = this.fetchedFiles.get(taskId);
    if (fetched) {
      this.fetchedFiles.delete(taskId);
      for (const path of fetched) void rm(path, { force: true });
    }
    this.free++;
    this.waiting.shift()?.();
  }

  /**
   * One shuffle read of a task: in memory, or to a file when it would take the executor's
   * in-memory fetches past wick.reducer.maxSizeFetchToMem (the task reads it in chunks).
   */
  private async fetchRead(
    taskId: number,
    src: ReturnType<typeof shuffleReadsOf>[number],
    read: { local: number; total: number; toDisk: number },
  ): Promise<ShuffleInput> {
    let local = 0;
    let total = 0;
    for (const b of src.blocks) {
      total += b.size;
      if (b.executorId === this.executor.executorId) local += b.size;
    }
    read.local += local;
    read.total += total;
    const toDisk = this.inMemory + total > this.maxSizeFetchToMem && this.spillDir !== undefined;
    const options = { appId: this.executor.appId };
    if (!toDisk) {
      this.inMemory += total;
      this.fetchedToMemory.set(taskId, (this.fetchedToMemory.get(taskId) ?? 0) + total);
      return {
        blocks: await fetchShuffleBlocks(
          this.rpcEnv(),
          src.shuffleId,
          src.reduceId,
          src.blocks,
          options,
        ),
      };
    }
    read.toDisk += total - local;
    const path = tempFile(this.spillDir as string, 'fetch', taskId);
    this.fetchedFiles.set(taskId, [...(this.fetchedFiles.get(taskId) ?? []), path]);
    await fetchShuffleBlocksToFile(
      this.rpcEnv(),
      src.shuffleId,
      src.reduceId,
      src.blocks,
      path,
      options,
    );
    return { file: path, bytes: total };
  }

  private takeSlot(taskId: number): Promise<void> {
    const slots = this.executor.cores + 1;
    const take = () => {
      this.free--;
      this.held.add(taskId);
      this.log.info(
        `Reduce task TID ${taskId} may hold fetched blocks: ${this.held.size} of ${slots} reduce slots taken`,
      );
    };
    if (this.free > 0) {
      take();
      return Promise.resolve();
    }
    this.log.info(
      `Reduce task TID ${taskId} waits for a reduce slot: ${this.held.size} of ${slots} taken`,
    );
    return new Promise((resolve) =>
      this.waiting.push(() => {
        take();
        resolve();
      }),
    );
  }
}
