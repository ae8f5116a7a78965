import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Node, parse } from 'acorn';
import { analyze } from 'periscopic';
import { ENTRY_SCOPE_SUFFIX } from '../util/shippedCode.js';

/**
 * What a shipped function's free names are in the module that wrote it, for an application run
 * from its code tree (backend/submit/bundle.ts): a name its module imported or declared at top
 * level can travel by reference (the executor asks the same module for it, see
 * util/shippedCode.ts), a function declared at the top of the entry travels as source (the entry
 * is the driver's program, which executors do not run), and anything else — a variable of an
 * enclosing function, a top-level variable of the entry — cannot travel.
 */

/** How a free name reaches an executor. */
export type FreeName =
  | { kind: 'binding'; module: string }
  | { kind: 'definition'; source: string; at: number }
  | { kind: 'local' }
  | { kind: 'entryVariable' }
  | { kind: 'unknown' };

interface ModuleInfo {
  /** The names the module assigns anywhere after their declaration (computed when first asked). */
  assigned?: Set<string>;
  /** The path in the tree, `/`-separated. */
  path: string;
  text: string;
  ast: Node;
  scopes: ReturnType<typeof analyze>;
  isEntry: boolean;
}

type AnyNode = Node & Record<string, unknown>;

export class ModuleScopes {
  private readonly modules = new Map<string, ModuleInfo | undefined>();

  /** `root`: the tree's folder; `entry`: the entry module's path in it. */
  constructor(
    readonly root: string,
    readonly entry: string,
  ) {}

  /**
   * The module of the tree that called into Wick (the nearest frame of the caller's stack in the
   * tree), with where in its text: where the function given to a transformation was written.
   */
  callerModule(): { path: string; line: number; column: number } | undefined {
    for (const frame of stackFrames()) {
      const path = this.treePath(frame.file);
      if (path !== undefined) return { path, line: frame.line, column: frame.column };
    }
    return undefined;
  }

  /**
   * Where `source` (a function's text) is in `module`, and what each of its free names is there;
   * undefined if the module does not hold that text (a function made at run time).
   */
  resolve(
    module: string,
    source: string,
    names: readonly string[],
    near?: { line: number; column: number },
  ): Map<string, FreeName> | undefined {
    const info = this.info(module);
    if (!info) return undefined;
    const at = findText(info.text, source, near);
    if (at === undefined) return undefined;
    return this.resolveAt(info, at, names);
  }

  /** The module's file and text, and where `source` is in it (as resolve finds it). */
  locate(
    module: string,
    source: string,
    near?: { line: number; column: number },
  ): { file: string; text: string; at: number } | undefined {
    const info = this.info(module);
    if (!info) return undefined;
    const at = findText(info.text, source, near);
    if (at === undefined) return undefined;
    return { file: resolve(this.root, ...module.split('/')), text: info.text, at };
  }

  private resolveAt(info: ModuleInfo, at: number, names: readonly string[]): Map<string, FreeName> {
    const chain = scopeChainAt(info, at);
    const moduleScope = info.scopes.scope;
    const out = new Map<string, FreeName>();
    for (const name of names) {
      if (chain.some((s) => s !== moduleScope && s.declarations.has(name))) {
        out.set(name, { kind: 'local' });
        continue;
      }
      if (!moduleScope.declarations.has(name)) {
        out.set(name, { kind: 'unknown' });
        continue;
      }
      if (!info.isEntry) {
        out.set(name, { kind: 'binding', module: info.path });
        continue;
      }
      out.set(name, this.entryName(info, name));
    }
    return out;
  }

  /** A top-level name of the entry: an import, a function (by value), or a variable (cannot go). */
  private entryName(info: ModuleInfo, name: string): FreeName {
    for (const stmt of (info.ast as unknown as { body: AnyNode[] }).body) {
      if (stmt.type === 'ImportDeclaration') {
        const specifiers = stmt.specifiers as { local: { name: string } }[];
        if (specifiers.some((s) => s.local.name === name)) {
          return {
            kind: 'binding',
            module: info.path.replace(/\.mjs$/, ENTRY_SCOPE_SUFFIX),
          };
        }
      }
      const decl = (stmt.type === 'ExportNamedDeclaration' ? stmt.declaration : stmt) as
        | AnyNode
        | undefined;
      if (!decl) continue;
      if (
        (decl.type === 'FunctionDeclaration' || decl.type === 'ClassDeclaration') &&
        (decl.id as { name: string } | null)?.name === name
      ) {
        return {
          kind: 'definition',
          source: info.text.slice(decl.start, decl.end),
          at: decl.start,
        };
      }
      // Any kind, not only `const`: compiled with bundle: true, esbuild writes the application's
      // top-level `const f = () => …` as `var f = …` and `class C {}` as `var C = class {}`. What
      // makes a value safe to copy is that the module never assigns the name again.
      if (decl.type === 'VariableDeclaration') {
        for (const d of decl.declarations as AnyNode[]) {
          const init = d.init as AnyNode | null;
          if ((d.id as { name?: string }).name !== name || !init) continue;
          if (DEFINITIONS.has(init.type as string) && !assignedNames(info).has(name)) {
            return {
              kind: 'definition',
              source: `const ${name} = ${info.text.slice(init.start, init.end)};`,
              at: init.start,
            };
          }
        }
      }
    }
    return { kind: 'entryVariable' };
  }

  /** The free names of a definition found by resolve, resolved where it is. */
  resolveDefinition(
    module: string,
    at: number,
    names: readonly string[],
  ): Map<string, FreeName> | undefined {
    const info = this.info(module);
    return info ? this.resolveAt(info, at, names) : undefined;
  }

  private treePath(file: string | undefined): string | undefined {
    if (!file) return undefined;
    const abs = file.startsWith('file:') ? fileURLToPath(file) : file;
    const rel = relative(this.root, resolve(abs));
    if (rel.startsWith('..') || rel === '' || !/\.[mc]js$/.test(rel)) return undefined;
    if (rel.split(sep).includes('node_modules')) return undefined;
    return rel.split(sep).join('/');
  }

  private info(path: string): ModuleInfo | undefined {
    if (this.modules.has(path)) return this.modules.get(path);
    let info: ModuleInfo | undefined;
    try {
      const text = readFileSync(resolve(this.root, ...path.split('/')), 'utf8');
      const ast = parse(text, { ecmaVersion: 'latest', sourceType: 'module' });
      const scopes = analyze(ast as unknown as Parameters<typeof analyze>[0]);
      info = { path, text, ast, scopes, isEntry: path === this.entry };
    } catch {
      info = undefined;
    }
    this.modules.set(path, info);
    return info;
  }
}

type Scope = ReturnType<typeof analyze>['scope'];

/** What a top-level variable may hold to travel by value, as its definition. */
const DEFINITIONS = new Set(['ArrowFunctionExpression', 'FunctionExpression', 'ClassExpression']);

/**
 * The names assigned (`=`, `+=`, `++`, a destructuring or for-in/of target) anywhere in a module,
 * in any scope: a variable of that name might not hold what it was declared with, so it is not
 * copied (a local of the same name being assigned makes this refuse more than it must, never less).
 */
function assignedNames(info: ModuleInfo): Set<string> {
  if (info.assigned) return info.assigned;
  const out = new Set<string>();
  const targets = (n: AnyNode | null | undefined): void => {
    if (!n) return;
    if (n.type === 'Identifier') out.add(n.name as string);
    else if (n.type === 'ArrayPattern') for (const e of n.elements as AnyNode[]) targets(e);
    else if (n.type === 'ObjectPattern') {
      for (const p of n.properties as AnyNode[]) targets((p.value ?? p.argument) as AnyNode);
    } else if (n.type === 'AssignmentPattern') targets(n.left as AnyNode);
    else if (n.type === 'RestElement') targets(n.argument as AnyNode);
  };
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    const n = node as AnyNode;
    if (n.type === 'AssignmentExpression') targets(n.left as AnyNode);
    else if (n.type === 'UpdateExpression') targets(n.argument as AnyNode);
    else if ((n.type === 'ForInStatement' || n.type === 'ForOfStatement') && n.left) {
      if ((n.left as AnyNode).type !== 'VariableDeclaration') targets(n.left as AnyNode);
    }
    for (const [k, child] of Object.entries(n)) if (k !== 'loc') visit(child);
  };
  visit(info.ast);
  info.assigned = out;
  return out;
}

/** The scopes that enclose the node starting at `at`, innermost first, without its own. */
function scopeChainAt(info: ModuleInfo, at: number): Scope[] {
  const chain: Scope[] = [];
  let node: AnyNode | undefined = info.ast as AnyNode;
  while (node) {
    const scope = info.scopes.map.get(node as never);
    if (scope && node.start !== at) chain.unshift(scope);
    if (node.start === at && node.type !== 'Program') break;
    node = childContaining(node, at);
  }
  if (!chain.includes(info.scopes.scope)) chain.push(info.scopes.scope);
  return chain;
}

function childContaining(node: AnyNode, at: number): AnyNode | undefined {
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc') continue;
    const children = Array.isArray(value) ? value : [value];
    for (const c of children) {
      if (c && typeof c === 'object' && typeof (c as AnyNode).start === 'number') {
        const n = c as AnyNode;
        if (n.start <= at && at < n.end) return n;
      }
    }
  }
  return undefined;
}

/** Where `source` is in `text`: the occurrence nearest the caller's position, if several. */
function findText(
  text: string,
  source: string,
  near?: { line: number; column: number },
): number | undefined {
  const found: number[] = [];
  for (let i = text.indexOf(source); i >= 0; i = text.indexOf(source, i + 1)) found.push(i);
  if (found.length <= 1 || !near) return found[0];
  let offset = 0;
  for (let line = 1; line < near.line; line++) offset = text.indexOf('\n', offset) + 1;
  offset += near.column - 1;
  return found.reduce((best, i) => (Math.abs(i - offset) < Math.abs(best - offset) ? i : best));
}

interface Frame {
  file: string | undefined;
  line: number;
  column: number;
}

function stackFrames(): Frame[] {
  const savedPrepare = Error.prepareStackTrace;
  const savedLimit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 64;
    Error.prepareStackTrace = (_err, callSites) => callSites;
    const holder: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holder);
    return (holder.stack ?? []).map((c) => ({
      file: c.getFileName() ?? undefined,
      line: c.getLineNumber() ?? 0,
      column: c.getColumnNumber() ?? 0,
    }));
  } finally {
    Error.prepareStackTrace = savedPrepare;
    Error.stackTraceLimit = savedLimit;
  }
}
