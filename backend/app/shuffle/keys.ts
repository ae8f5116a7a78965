/**
 * Keys of pair RDDs are JSON values; two keys are equal when their canonical JSON is the same
 * text, on every executor and in every language (docs/protocol.md, "Shuffle"): objects with their
 * members sorted by name (UTF-16 code unit order, as JavaScript sorts strings), no whitespace,
 * numbers as JavaScript's JSON.stringify writes them (so 1 and 1.0 are one key, -0 is 0).
 */
export function canonicalJson(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && !Number.isFinite(v))
      throw new Error(`A key must be a JSON value; ${v} is not one`);
    if (v === undefined) return 'null';
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const names = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${names.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

/**
 * The key's hash: 32-bit FNV-1a over the UTF-8 bytes of its canonical JSON, unsigned. A plain,
 * documented hash (not V8's) so that every executor, in any language, sends a key to the same
 * reducer.
 */
export function hashKey(v: unknown): number {
  return fnv1a(canonicalJson(v));
}

export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      h = Math.imul(h ^ c, 0x01000193);
      continue;
    }
    // UTF-8 of the code point, byte by byte (a lone surrogate is U+FFFD, as Buffer.from writes it).
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    const bytes =
      c < 0x800
        ? [0xc0 | (c >> 6), 0x80 | (c & 63)]
        : c < 0x10000
          ? [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63)]
          : [0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63)];
    for (const b of bytes) h = Math.imul(h ^ b, 0x01000193);
  }
  return h >>> 0;
}

/** Rank of a JSON type in the key order: null < booleans < numbers < strings < arrays < objects. */
function rank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
      return 2;
    case 'string':
      return 3;
    default:
      return Array.isArray(v) ? 4 : 5;
  }
}

/**
 * The key order of sortByKey and the range partitioner: by JSON type first (see rank), then
 * false < true, numbers by value, strings by UTF-16 code units, arrays element by element (a
 * prefix first), objects by their canonical JSON text.
 */
export function compareKeys(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return 0;
    case 1:
    case 2:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 3:
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 4: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareKeys(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    default: {
      const x = canonicalJson(a);
      const y = canonicalJson(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
}

/**
 * A map from keys to entries with the equality above: strings and numbers are looked up as
 * themselves (for them canonical JSON is one-to-one, and a Map compares numbers as JSON does,
 * -0 as 0), every other key by its canonical JSON text. Most keys are strings or numbers, and
 * a word count then builds no JSON text per word.
 */
export class KeyMap<E> {
  /** The string keys' own map: a hot loop of string keys looks them up here, with no dispatch. */
  readonly strings = new Map<string, E>();
  private readonly numbers = new Map<number, E>();
  private readonly others = new Map<string, E>();

  get(k: unknown): E | undefined {
    if (typeof k === 'string') return this.strings.get(k);
    if (typeof k === 'number') return this.numbers.get(k);
    return this.others.get(canonicalJson(k));
  }

  set(k: unknown, e: E): void {
    if (typeof k === 'string') this.strings.set(k, e);
    else if (typeof k === 'number') {
      if (!Number.isFinite(k)) throw new Error(`A key must be a JSON value; ${k} is not one`);
      this.numbers.set(k, e);
    } else this.others.set(canonicalJson(k), e);
  }

  get size(): number {
    return this.strings.size + this.numbers.size + this.others.size;
  }

  clear(): void {
    this.strings.clear();
    this.numbers.clear();
    this.others.clear();
  }

  *values(): IterableIterator<E> {
    yield* this.strings.values();
    yield* this.numbers.values();
    yield* this.others.values();
  }
}
