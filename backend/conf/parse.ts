/**
 * Parsers for configuration values, in Spark's notation: durations like `500ms`, `3s`, `5m`
 * and sizes like `512m`, `2g`. Each failure names what it got and what it expected, so that a
 * caller can prefix the key it was reading.
 */

const timeUnits: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const sizeUnits: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
};

/** `3s` → 3000. A bare number is taken in `defaultUnit`. */
export function parseDurationMs(raw: string, defaultUnit: keyof typeof timeUnits = 'ms'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(raw);
  const unit = (m?.[2] || defaultUnit).toLowerCase();
  const factor = timeUnits[unit];
  if (!m || factor === undefined) {
    throw new Error(`expected a duration such as 500ms, 3s, 5m or 1h, got "${raw}"`);
  }
  return Math.round(Number(m[1]) * factor);
}

/** `512m` → 536870912. A bare number is taken in `defaultUnit`. */
export function parseSizeBytes(raw: string, defaultUnit: keyof typeof sizeUnits = 'b'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(raw);
  const unit = (m?.[2] || defaultUnit).toLowerCase();
  const factor = sizeUnits[unit];
  if (!m || factor === undefined) {
    throw new Error(`expected a size such as 512k, 512m or 2g, got "${raw}"`);
  }
  return Math.round(Number(m[1]) * factor);
}

export function parseInteger(
  raw: string,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const trimmed = raw.trim();
  // Decimal digits only: Number() alone would also take "0x10", "1e3" and "1.0".
  const n = /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const hasMin = min !== Number.MIN_SAFE_INTEGER;
    const hasMax = max !== Number.MAX_SAFE_INTEGER;
    const range =
      hasMin && hasMax
        ? ` from ${min} to ${max}`
        : hasMin
          ? ` of at least ${min}`
          : hasMax
            ? ` of at most ${max}`
            : '';
    throw new Error(`expected a whole number${range}, got "${raw}"`);
  }
  return n;
}

export function parseBoolean(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`expected true or false, got "${raw}"`);
}
