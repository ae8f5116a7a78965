import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import type { Aggregator, FunctionSpec, TaskDescription } from '../../protocol/task.js';
import {
  BINDING_EXPORT,
  offerModuleApi,
  RETURN_PREFIX,
  registeredBinding,
} from '../../util/shippedCode.js';

/** Where an executor's tasks run: what their functions' modules and files resolve against. */
export interface TaskPlace {
  /** The folder `require` resolves from when a function names no module (no code tree). */
  appDir: string;
  /** The application's code tree, fetched from the driver (see util/shippedCode.ts). */
  codeRoot?: string;
  /** The folder of the files the application added (WickFiles.get). */
  filesDir?: string;
  /** Where this executor's map tasks write their shuffle output (under its app's local dir). */
  shuffleDir?: string;
  /** host:port of this executor's shuffle block server, for its map tasks' MapStatus. */
  shuffleLocation?: string;
  /** Whether shuffleLocation is the worker's shuffle service (the outputs outlive the executor). */
  shuffleService?: boolean;
  executorId?: string;
  /** wick.shuffle.spill.memoryThreshold, in bytes: when a task's shuffle buffers spill. */
  spillThreshold?: number;
}

type Compiled = (...args: unknown[]) => unknown;

/**
 * Compiles shipped function sources inside an executor. Each function gets `require` and
 * `__wickImport` bound to the module that wrote it (or the application's folder), the names it
 * uses of its module (`bindings`: asked of that module of the code tree, which an executor
 * imports as the driver did) and the definitions shipped with it (`defs`). Compiled functions are
 * cached by all of that: the tasks of one job ship the same few functions many times.
 */
export class FunctionCompiler {
  private readonly cache = new Map<string, Compiled>();
  private readonly requires = new Map<string, NodeRequire>();
  private readonly loaded = new Map<string, unknown>();

  constructor(readonly place: TaskPlace) {
    // For the require banner of the tree's modules this thread imports, on a Node that lacks
    // process.getBuiltinModule.
    offerModuleApi();
  }

  /**
   * Imports what the task's functions use of the code tree, so that compile() need not wait
   * (a no-op for functions that use nothing of it).
   */
  async prepare(task: TaskDescription): Promise<void> {
    for (const spec of specsOf(task)) {
      if (!spec.bindings) continue;
      for (const [name, module] of Object.entries(spec.bindings)) {
        const key = `${module}\0${name}`;
        if (this.loaded.has(key)) continue;
        const url = this.moduleUrl(module);
        const ns = (await import(url)) as Record<string, unknown>;
        // An ES module registered its lookup under its URL, which Node gives as the real path's;
        // a CommonJS module's is on what it exports (CJS_BINDING_FOOTER).
        const binding =
          registeredBinding(url) ??
          registeredBinding(pathToFileURL(realpathSync(fileURLToPath(url))).href) ??
          (ns.default as Record<string, unknown> | undefined)?.[BINDING_EXPORT];
        if (typeof binding !== 'function') {
          throw new Error(
            `${module} of the application's code registered no binding lookup (was it compiled by wick submit?)`,
          );
        }
        this.loaded.set(key, (binding as (n: string) => unknown)(name));
      }
    }
  }

  compile(spec: FunctionSpec): Compiled {
    const key =
      spec.module === undefined && spec.bindings === undefined && spec.defs === undefined
        ? spec.source
        : `${spec.source}\0${spec.module}\0${JSON.stringify(spec.bindings)}\0${JSON.stringify(spec.defs)}`;
    let fn = this.cache.get(key);
    if (!fn) {
      fn = this.build(spec);
      this.cache.set(key, fn);
    }
    return fn;
  }

  private build(spec: FunctionSpec): Compiled {
    const names = Object.keys(spec.bindings ?? {});
    const values = names.map((n) => {
      const key = `${spec.bindings?.[n]}\0${n}`;
      if (!this.loaded.has(key)) throw new Error(`${n} was not prepared before compiling`);
      return this.loaded.get(key);
    });
    const req = this.requireFor(spec.module);
    const importer = (specifier: string) => {
      if (specifier.startsWith('node:') || isBuiltin(req, specifier)) return import(specifier);
      return import(pathToFileURL(req.resolve(specifier)).href);
    };
    const factory = vm.compileFunction(
      bodyOf(spec),
      ['require', '__wickImport', '__name', '__require', ...names],
      placeOf(spec, spec.module ? this.modulePath(spec.module) : 'wick-task-function.js'),
    ) as (...args: unknown[]) => Compiled;
    return factory(req, importer, keepName, req, ...values);
  }

  private requireFor(module: string | undefined): NodeRequire {
    const from =
      module && this.place.codeRoot
        ? this.modulePath(module)
        : join(this.place.appDir, 'wick-app.js');
    let req = this.requires.get(from);
    if (!req) {
      req = createRequire(from);
      this.requires.set(from, req);
    }
    return req;
  }

  private modulePath(module: string): string {
    if (!this.place.codeRoot) {
      throw new Error(`A function uses ${module} of the application's code, which was not fetched`);
    }
    return join(this.place.codeRoot, ...module.split('/'));
  }

  private moduleUrl(module: string): string {
    return pathToFileURL(this.modulePath(module)).href;
  }
}

/**
 * The function's body: its definitions, then the function. Laid out by the driver (spec.origin,
 * app/functionOrigin.ts), the texts carry their own line breaks and go together as they are.
 */
export function bodyOf(spec: FunctionSpec): string {
  const defs = spec.defs ?? [];
  if (spec.origin) return `${defs.join('')}${RETURN_PREFIX}${spec.source}\n);`;
  return `${defs.join('\n')}\n${RETURN_PREFIX}${spec.source});`;
}

/**
 * Where the body is compiled: at its place in the user's original file when the driver said
 * (so stacks name it), else in the module that wrote it, else under a name of its own.
 */
export function placeOf(
  spec: FunctionSpec,
  fallback: string,
): { filename: string; lineOffset?: number; columnOffset?: number } {
  const o = spec.origin;
  if (!o) return { filename: fallback };
  const first = spec.defs && spec.defs.length > 0 ? 0 : RETURN_PREFIX.length;
  return { filename: o.file, lineOffset: o.line - 1, columnOffset: o.column - 1 - first };
}

function* specsOf(task: TaskDescription): Iterable<FunctionSpec> {
  for (const t of task.transformations) yield t.fn;
  const a = task.action;
  if (a.kind === 'reduce' || a.kind === 'foreach') yield a.fn;
  if (a.kind === 'aggregate') yield a.seqOp;
  if (a.kind === 'shuffleWrite' && a.aggregator) yield* aggregatorSpecs(a.aggregator);
  const src = task.source;
  if (src.kind === 'shuffle' && src.aggregator) yield* aggregatorSpecs(src.aggregator);
  if (src.kind === 'coalesced') {
    for (const part of src.parts) {
      for (const t of part.transformations) yield t.fn;
      if (part.source.kind === 'shuffle' && part.source.aggregator)
        yield* aggregatorSpecs(part.source.aggregator);
    }
  }
}

function* aggregatorSpecs(agg: Aggregator): Iterable<FunctionSpec> {
  if (agg.createCombiner) yield agg.createCombiner;
  yield agg.mergeValue;
  yield agg.mergeCombiners;
}

function isBuiltin(req: NodeRequire, specifier: string): boolean {
  try {
    return req.resolve(specifier) === specifier;
  } catch {
    return false;
  }
}

/**
 * esbuild's keepNames helper: code run through tsx (or bundled with keepNames) wraps each named
 * inner function in `__name(fn, "name")`, so a shipped function's source may call it. (Its other
 * helper that shipped code may call, `__require`, is what an ES module bundle such as `wick submit`
 * makes of `require`: functions get `require` under that name too.)
 */
function keepName<F>(fn: F, value: string): F {
  return Object.defineProperty(fn, 'name', { value, configurable: true });
}
