/** A whole-number command-line option of a benchmark, checked: `--name` must be in [min, max]. */
export function int(name: string, raw: string | undefined, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}
