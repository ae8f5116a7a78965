import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Node, parse } from 'acorn';
import { MAX_PATH_LENGTH, MAX_SOURCE_LINE } from '../protocol/bounds.js';
import type { SourceLocation } from '../protocol/common.js';

/**
 * Shipped functions keep their place in the user's file. A function travels as the text of the
 * compiled module (esbuild's output, which drops comments and blank lines and re-indents), and an
 * executor compiles it on its own: without more, its stack says `wick-task-function.js:2:22`.
 * Here the driver reads the module's source map and lays the text out again as the original was
 * — each line moved down to its original line (blank lines added, never removed) and indented to
 * its original column — and says where it begins (FunctionSpec.origin). The executor compiles it
 * there (vm's filename, lineOffset, columnOffset), so its stack, the task failure the driver
 * hears of, and a debugger all name `/abs/throws.ts:7:11`. Nothing is mapped at run time.
 *
 * Line breaks are added only where the text already has one outside a string or template literal,
 * which leaves the code's meaning alone (automatic semicolon insertion only asks whether there is
 * a line break, not how many). A line the map does not place, or that esbuild moved above the
 * one before it, keeps its place after the previous line: its frames are then a line or so off.
 */

/** A piece of the compiled body: its text, and its offset in the module's text. */
export interface Piece {
  text: string;
  at: number;
  /** A definition (a statement) or the function (an expression). */
  kind: 'def' | 'function';
  /** Characters of `text` before the point `at` is (`const f = ` written before an initializer). */
  lead?: number;
}

export interface LaidOut {
  defs: string[];
  source: string;
  origin: SourceLocation;
  /** For measuring: lines placed on their original line, of those the map places, of all. */
  placed: number;
  mapped: number;
  lines: number;
}

/** The most text a laid-out piece may grow to (the padding is blank lines and spaces). */
const MAX_LAID_OUT = 1024 * 1024;

const maps = new Map<string, ModuleMap | undefined>();

interface ModuleMap {
  map: SourceMap;
  lineStarts: number[];
  dir: string;
}

/**
 * Lays out `pieces` (the definitions in order, then the function) of the module at `modulePath`
 * whose text is `text`, by the module's inline source map; undefined when it has none, or the
 * pieces do not all come from one original file.
 */
export function layOut(modulePath: string, text: string, pieces: Piece[]): LaidOut | undefined {
  const mm = moduleMap(modulePath, text);
  if (!mm) return undefined;
  let file: string | undefined;
  let cur = 0;
  let origin: SourceLocation | undefined;
  let placed = 0;
  let mapped = 0;
  let lines = 0;
  const out: string[] = [];
  for (const piece of pieces) {
    const strings = multiLineLiterals(piece);
    const pieceLines = piece.text.split('\n');
    const start = position(mm.lineStarts, piece.at);
    let text = '';
    let lineOffset = 0;
    for (let i = 0; i < pieceLines.length; i++) {
      const line = pieceLines[i] as string;
      const genLine = start.line + i;
      const lead = i === 0 ? 0 : line.length - line.trimStart().length;
      const genColumn = i === 0 ? start.column : lead;
      // A line's first mapping may be its indentation's start (esbuild's is): the first token is
      // then where it points, whatever the indentation before it.
      const found = original(mm, genLine, genColumn, i > 0);
      const o =
        found && i === 0 && piece.lead
          ? { ...found, column: Math.max(0, found.column - piece.lead) }
          : found;
      if (o && file === undefined) file = o.file;
      const here = o && o.file === file ? o : undefined;
      lines++;
      if (here) mapped++;
      if (i === 0) {
        if (!origin) {
          if (!here) return undefined;
          origin = { file: here.file, line: here.line, column: here.column + 1 };
          cur = here.line;
          placed++;
        } else if (here && here.line > cur) {
          text += `${'\n'.repeat(here.line - cur)}${' '.repeat(here.column)}`;
          cur = here.line;
          placed++;
        } else if (piece.kind === 'def') {
          text += '\n';
          cur++;
        }
        text += line;
      } else {
        const breakAt = lineOffset - 1;
        // A comment esbuild kept has no mapping of its own (it borrows a neighbour's): it goes
        // on the next line as it is, and the code after it finds its own place.
        const comment = /^\s*(\/\/|\/\*|\*)/.test(line);
        if (strings.some(([s, e]) => s < breakAt && breakAt < e) || !here || comment) {
          text += `\n${line}`;
          cur++;
        } else {
          const n = Math.max(1, here.line - cur);
          text += `${'\n'.repeat(n)}${' '.repeat(here.column)}${line.trimStart()}`;
          cur += n;
          if (here.line === cur) placed++;
        }
      }
      lineOffset += line.length + 1;
      if (text.length > MAX_LAID_OUT) return undefined;
    }
    out.push(text);
  }
  if (!origin || origin.line > MAX_SOURCE_LINE || origin.file.length > MAX_PATH_LENGTH) {
    return undefined;
  }
  const source = out.pop() as string;
  return { defs: out, source, origin, placed, mapped, lines };
}

function moduleMap(modulePath: string, text: string): ModuleMap | undefined {
  if (maps.has(modulePath)) return maps.get(modulePath);
  let mm: ModuleMap | undefined;
  try {
    const payload = inlineMap(text);
    if (payload) {
      const lineStarts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1))
        lineStarts.push(i + 1);
      mm = { map: new SourceMap(payload), lineStarts, dir: dirname(modulePath) };
    }
  } catch {
    mm = undefined;
  }
  maps.set(modulePath, mm);
  return mm;
}

const INLINE_MAP =
  /\/\/# sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/=]+)\s*$/;

/** The module's inline source map (esbuild's `sourcemap: 'inline'`), if it has one. */
export function inlineMap(text: string): SourceMapPayload | undefined {
  const m = INLINE_MAP.exec(text.slice(-Math.min(text.length, 64 * 1024 * 1024)));
  if (!m) return undefined;
  return JSON.parse(Buffer.from(m[1] as string, 'base64').toString('utf8')) as SourceMapPayload;
}

/** 0-based line and column of `offset`. */
function position(lineStarts: number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((lineStarts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, column: offset - (lineStarts[lo] as number) };
}

/** The original file, 1-based line and 0-based column of a generated position. */
function original(
  mm: ModuleMap,
  line: number,
  column: number,
  atMapping = false,
): { file: string; line: number; column: number } | undefined {
  const e = mm.map.findEntry(line, column) as Partial<{
    generatedLine: number;
    generatedColumn: number;
    originalSource: string;
    originalLine: number;
    originalColumn: number;
  }>;
  if (e.generatedLine !== line || e.originalSource === undefined) return undefined;
  const src = e.originalSource;
  const file = src.startsWith('file:')
    ? fileURLToPath(src)
    : isAbsolute(src)
      ? src
      : resolve(mm.dir, src);
  return {
    file,
    line: (e.originalLine as number) + 1,
    column: Math.max(
      0,
      (e.originalColumn as number) + (atMapping ? 0 : column - (e.generatedColumn as number)),
    ),
  };
}

/** [start, end) offsets in the piece of its string and template literals that span lines. */
function multiLineLiterals(piece: Piece): [number, number][] {
  if (!piece.text.includes('`') && !piece.text.includes('\\\n')) return [];
  const shift = piece.kind === 'function' ? 1 : 0;
  let ast: Node;
  try {
    ast = parse(piece.kind === 'function' ? `(${piece.text})` : piece.text, {
      ecmaVersion: 'latest',
      sourceType: 'script',
    });
  } catch {
    // Unparsed, every break counts as inside one: nothing is moved.
    return [[-1, piece.text.length + 1]];
  }
  const out: [number, number][] = [];
  const visit = (n: unknown): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) {
      for (const c of n) visit(c);
      return;
    }
    const node = n as { type?: string; start?: number; end?: number };
    if (
      (node.type === 'TemplateLiteral' || node.type === 'Literal') &&
      typeof node.start === 'number' &&
      typeof node.end === 'number'
    ) {
      const s = node.start - shift;
      const e = node.end - shift;
      if (piece.text.slice(s, e).includes('\n')) out.push([s, e]);
    }
    for (const [k, c] of Object.entries(n)) if (k !== 'loc') visit(c);
  };
  visit(ast);
  return out;
}
