import { parseBoolean, parseDurationMs, parseInteger, parseSizeBytes } from './parse.js';
import { SPARK_REFUSED_KEYS, wickKeyFor, wickValueFor } from './sparkNames.js';

/**
 * A typed configuration key with its default, in the manner of Spark's ConfigEntry. Entries are
 * declared next to the code that reads them and collected in one registry, so that unknown keys
 * can be reported and the configuration documented.
 */
export interface ConfigEntry<T> {
  readonly key: string;
  readonly doc: string;
  readonly defaultValue: T;
  /** The default as a user would write it, for docs and messages. */
  readonly defaultText: string;
  parse(raw: string): T;
}

const entries = new Map<string, ConfigEntry<unknown>>();

export function define<T>(
  key: string,
  defaultText: string,
  doc: string,
  parse: (raw: string) => T,
): ConfigEntry<T> {
  const entry: ConfigEntry<T> = {
    key,
    doc,
    defaultText,
    defaultValue: parse(defaultText),
    parse,
  };
  entries.set(key, entry as ConfigEntry<unknown>);
  return entry;
}

export const conf = {
  int: (key: string, dflt: number, doc: string, min?: number, max?: number) =>
    define(key, String(dflt), doc, (raw) => parseInteger(raw, min, max)),
  bool: (key: string, dflt: boolean, doc: string) => define(key, String(dflt), doc, parseBoolean),
  durationMs: (key: string, dflt: string, doc: string) =>
    define(key, dflt, doc, (raw) => parseDurationMs(raw)),
  sizeBytes: (key: string, dflt: string, doc: string) =>
    define(key, dflt, doc, (raw) => parseSizeBytes(raw)),
  string: (key: string, dflt: string, doc: string) => define(key, dflt, doc, (raw) => raw),
};

export function knownConfigEntries(): ConfigEntry<unknown>[] {
  return [...entries.values()].sort((a, b) => a.key.localeCompare(b.key));
}

/**
 * A family of keys with a name inside (Spark's `spark.worker.resource.<name>.amount`): known by
 * pattern, documented once by its template, read by the module that declared it.
 */
export interface ConfigFamily {
  /** As the docs print it: `wick.worker.resource.<name>.amount`. */
  readonly template: string;
  readonly pattern: RegExp;
  readonly doc: string;
}

const families: ConfigFamily[] = [];

export function defineFamily(template: string, pattern: RegExp, doc: string): ConfigFamily {
  const family = { template, pattern, doc };
  families.push(family);
  return family;
}

export function knownConfigFamilies(): readonly ConfigFamily[] {
  return families;
}

export function isKnownKey(key: string): boolean {
  return entries.has(key) || families.some((f) => f.pattern.test(key));
}

/** Thrown for a value that does not parse; names the key, the value and what was expected. */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly value: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`Invalid value for ${key}: ${reason}`, options);
    this.name = 'ConfigError';
  }
}

/** The key Wick reads for `key`: Spark's `spark.x` is `wick.x` when Wick has it (sparkNames.ts). */
export function wickKey(key: string): string {
  return wickKeyFor(key, isKnownKey);
}

/**
 * Wick's SparkConf: string settings read through typed entries. A setting given under Spark's name
 * (`spark.executor.memory`) is kept under Wick's (`wick.executor.memory`), so that every reader
 * sees it whichever name it was given by.
 */
export class WickConf {
  private readonly settings = new Map<string, string>();

  constructor(initial?: Iterable<[string, string]> | Record<string, string>) {
    if (!initial) return;
    const pairs = Symbol.iterator in initial ? initial : Object.entries(initial);
    for (const [k, v] of pairs as Iterable<[string, string]>) this.set(k, v);
  }

  set(key: string, value: string): this {
    const k = wickKey(key);
    this.settings.set(k, k === key ? value : wickValueFor(k, value));
    return this;
  }

  getRaw(key: string): string | undefined {
    return this.settings.get(wickKey(key));
  }

  contains(key: string): boolean {
    return this.settings.has(wickKey(key));
  }

  get<T>(entry: ConfigEntry<T>): T {
    const raw = this.settings.get(entry.key);
    if (raw === undefined) return entry.defaultValue;
    try {
      return entry.parse(raw);
    } catch (err) {
      throw new ConfigError(entry.key, raw, (err as Error).message, { cause: err });
    }
  }

  /** Parses every known key that is set, so that a daemon fails at start-up, not mid-run. */
  validate(): void {
    for (const [key, value] of this.settings) {
      const refused = SPARK_REFUSED_KEYS[key];
      if (refused !== undefined) throw new ConfigError(key, value, refused);
      const entry = entries.get(key);
      if (entry) this.get(entry);
    }
  }

  unknownKeys(): string[] {
    return [...this.settings.keys()].filter((k) => !isKnownKey(k));
  }

  entries(): [string, string][] {
    return [...this.settings.entries()];
  }

  clone(): WickConf {
    return new WickConf(this.settings);
  }
}
