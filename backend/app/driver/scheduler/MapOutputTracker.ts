import type { ShuffleBlockRef } from '../../../protocol/executor.js';
import type { MapStatus } from '../../../protocol/shuffle.js';

/**
 * Where each shuffle's map outputs are (Spark's MapOutputTrackerMaster): a MapStatus per map
 * partition, dropped when its executor is lost or a reducer could not fetch it. Pure bookkeeping.
 */
export class MapOutputTracker {
  private readonly shuffles = new Map<number, (MapStatus | undefined)[]>();

  registerShuffle(shuffleId: number, numMaps: number): void {
    if (!this.shuffles.has(shuffleId)) this.shuffles.set(shuffleId, new Array(numMaps));
  }

  registerMapOutput(shuffleId: number, mapId: number, status: MapStatus): void {
    const outputs = this.outputs(shuffleId);
    if (mapId < 0 || mapId >= outputs.length)
      throw new Error(`Shuffle ${shuffleId} has no map partition ${mapId}`);
    outputs[mapId] = status;
  }

  /** The map partitions whose output is not available. */
  missing(shuffleId: number): number[] {
    const out: number[] = [];
    for (const [i, s] of this.outputs(shuffleId).entries()) if (!s) out.push(i);
    return out;
  }

  /** Forgets the outputs of an executor (lost, or a fetch from it failed); returns how many. */
  removeOutputsOnExecutor(executorId: string): number {
    let n = 0;
    for (const outputs of this.shuffles.values()) {
      for (const [i, s] of outputs.entries()) {
        if (s?.executorId === executorId) {
          outputs[i] = undefined;
          n++;
        }
      }
    }
    return n;
  }

  removeMapOutput(shuffleId: number, mapId: number, executorId: string): void {
    const outputs = this.shuffles.get(shuffleId);
    if (outputs?.[mapId]?.executorId === executorId) outputs[mapId] = undefined;
  }

  /** Reducer `reduceId`'s block of every map output; all must be available. */
  blocksFor(shuffleId: number, reduceId: number): ShuffleBlockRef[] {
    return this.outputs(shuffleId).map((s, mapId) => {
      if (!s) throw new Error(`Shuffle ${shuffleId}: map output ${mapId} is missing`);
      return {
        location: s.location,
        executorId: s.executorId,
        mapId,
        size: s.sizes[reduceId] ?? 0,
        crc32: s.crc32s[reduceId] ?? 0,
      };
    });
  }

  /** Bytes the shuffle's map outputs wrote in all. */
  bytesWritten(shuffleId: number): number {
    let n = 0;
    for (const s of this.outputs(shuffleId)) for (const b of s?.sizes ?? []) n += b;
    return n;
  }

  private outputs(shuffleId: number): (MapStatus | undefined)[] {
    const o = this.shuffles.get(shuffleId);
    if (!o) throw new Error(`Shuffle ${shuffleId} is not registered`);
    return o;
  }
}
