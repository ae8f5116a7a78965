/**
 * Estimated memory of a record held in a task's buffers beyond its JSON text: the string or
 * array header and its slot in the buffer (V8 headers are 12–24 bytes, a [key, value] pair
 * array holds two more pointers). An estimate, as Spark's SizeEstimator is: the threshold it is
 * compared with (wick.shuffle.spill.memoryThreshold) is one too.
 */
export const RECORD_OVERHEAD = 48;

/**
 * The size of a map of combiners, estimated from samples (Spark's SizeTracker): every `every`
 * updates the entry just updated is measured as JSON, and the running average of those
 * samples times the entries is the estimate. Sampling the entry updated rather than a random one
 * weighs the keys by how often they grow, which is where a growing combiner (a list) grows.
 */
export class SampledSize {
  private average = 0;
  private since = 0;

  constructor(private readonly every = 128) {}

  /** True when this update's entry should be measured (then call sample). */
  due(): boolean {
    return ++this.since >= this.every;
  }

  sample(entry: unknown): void {
    this.since = 0;
    const n = JSON.stringify(entry)?.length ?? 4;
    this.average = this.average === 0 ? n : this.average + 0.2 * (n - this.average);
  }

  estimate(entries: number): number {
    return entries * (this.average + RECORD_OVERHEAD);
  }
}
