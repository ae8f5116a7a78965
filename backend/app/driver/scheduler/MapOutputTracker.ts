import type { MapStatus } from '../../../protocol/shuffle.js';
import type { ShuffleBlockRef } from '../../../protocol/task.js';

/**
 * Where each shuffle's map outputs are (Spark's MapOutputTrackerMaster): a MapStatus per map
 * partition, dropped when its executor is lost (unless its worker's shuffle service serves it),
 * when its worker is lost, or when a reducer could not fetch it. Pure bookkeeping.
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

  /**
   * Forgets the outputs of an executor (lost, or a fetch from it failed); returns how many.
   * `keepServiced`: those its worker's shuffle service serves stay (only the executor is gone).
   */
  removeOutputsOnExecutor(executorId: string, keepServiced = false): number {
    return this.removeWhere(
      (s) => s.executorId === executorId && !(keepServiced && s.shuffleService === true),
    );
  }

  /**
   * Forgets the outputs a shuffle service on `host` serves (Spark's removeOutputsOnHost): its
   * worker is lost, and with it whatever its service held, whichever executor wrote it.
   */
  removeOutputsOnHost(host: string): number {
    return this.removeWhere((s) => s.shuffleService === true && hostOf(s.location) === host);
  }

  /** Forgets the outputs one shuffle service serves (a fetch from it failed). */
  removeOutputsAt(location: string): number {
    return this.removeWhere((s) => s.shuffleService === true && s.location === location);
  }

  /** The MapStatus of a map output, if it is available. */
  status(shuffleId: number, mapId: number): MapStatus | undefined {
    return this.shuffles.get(shuffleId)?.[mapId];
  }

  private removeWhere(drop: (s: MapStatus) => boolean): number {
    let n = 0;
    for (const outputs of this.shuffles.values()) {
      for (const [i, s] of outputs.entries()) {
        if (s && drop(s)) {
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

/** The host of a host:port (an IPv6 host is bracketed: [::1]:7337). */
export function hostOf(location: string): string {
  const colon = location.lastIndexOf(':');
  const host = colon < 0 ? location : location.slice(0, colon);
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
