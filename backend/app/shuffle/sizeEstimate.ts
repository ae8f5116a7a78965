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
    const n = estimateJsonSize(entry);
    this.average = this.average === 0 ? n : this.average + 0.2 * (n - this.average);
  }

  estimate(entries: number): number {
    return entries * (this.average + RECORD_OVERHEAD);
  }
}

/** Elements or members measured of a large array or object; the rest are taken to be like them. */
const SAMPLE = 16;

/**
 * About the length of a value's JSON text, in time bounded by the sample, not by the value: a
 * combiner that grows (groupByKey's list of a hot key) is measured as often as it is updated,
 * and measuring it whole each time would cost the square of its size.
 */
export function estimateJsonSize(v: unknown, depth = 0): number {
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'number':
    case 'boolean':
      return String(v).length;
    case 'object': {
      if (v === null) return 4;
      if (depth >= 4) return 16;
      if (Array.isArray(v)) {
        const n = v.length;
        if (n <= SAMPLE) {
          let sum = 2;
          for (const x of v) sum += estimateJsonSize(x, depth + 1) + 1;
          return sum;
        }
        let sum = 0;
        for (let i = 0; i < SAMPLE; i++)
          sum += estimateJsonSize(v[Math.floor((i * n) / SAMPLE)], depth + 1) + 1;
        return 2 + (sum * n) / SAMPLE;
      }
      const names = Object.keys(v);
      const take = Math.min(SAMPLE, names.length);
      let sum = 0;
      for (let i = 0; i < take; i++) {
        const k = names[Math.floor((i * names.length) / take)] as string;
        sum += k.length + 4 + estimateJsonSize((v as Record<string, unknown>)[k], depth + 1);
      }
      return 2 + (take === 0 ? 0 : (sum * names.length) / take);
    }
    default:
      return 4;
  }
}
