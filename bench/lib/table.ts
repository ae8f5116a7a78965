/** Prints aligned plain-text tables: the first column left-aligned, the others right-aligned. */

export type Cell = string | number;

export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
): string {
  const text = [headers, ...rows].map((r) => r.map((c) => String(c)));
  const widths = headers.map((_, i) => Math.max(...text.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const [head, ...body] = text;
  return [line(head as string[]), rule, ...body.map(line)].join('\n');
}

export function printTable(
  title: string,
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
): void {
  console.log(`\n${title}\n${formatTable(headers, rows)}`);
}

/** A number with thousands separators and a fixed number of decimals. */
export function fmt(value: number, decimals = 0): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}
