import nodeModule from 'node:module';

/**
 * The shape of an application's code tree (backend/submit/bundle.ts makes it; the driver and the
 * executors run it): one ES module per module of the application, under a root that also holds
 * the npm packages they use, plus these files of Wick's own.
 */

/**
 * Where each ES module of the tree leaves its binding lookup (a function that gives its top-level
 * names by name, for shipped functions): a registry on the global object, by the module's URL
 * (`import.meta.url`), under Symbol.for(BINDING_REGISTRY). Not an export: every name a module
 * declares shows in the debugger's Module scope beside the user's own (issue 29), and a statement
 * that declares nothing adds none.
 */
export const BINDING_REGISTRY = 'wick.bindings';

/**
 * The footer that registers a module's lookup. A direct eval sees the module's own scope; the
 * lookup is a plain function, not an arrow, and takes its name from `arguments`, which no binding
 * of a strict module can be called: a parameter would hide the user's name of the same spelling.
 * The first module to run makes the registry, so that a module imported before any of Wick's task
 * code ran in that thread (a driver's own, say) is found too.
 */
export const BINDING_FOOTER = `(globalThis[Symbol.for(${JSON.stringify(BINDING_REGISTRY)})] ??= {})[import.meta.url] = function () { return eval(arguments[0]); };`;

/** A CommonJS module has no Module scope: its lookup is a hidden property of what it exports. */
export const BINDING_EXPORT = '__wickBinding';

/** BINDING_FOOTER for a CommonJS module, on whatever object it exports (if it is one). */
export const CJS_BINDING_FOOTER = `try { Object.defineProperty(module.exports, '${BINDING_EXPORT}', { value: function () { return eval(arguments[0]); } }); } catch {}`;

export type BindingLookup = (name: string) => unknown;

/** The lookup the ES module at `url` registered (BINDING_FOOTER), if it ran in this thread. */
export function registeredBinding(url: string): BindingLookup | undefined {
  const registry = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[
    Symbol.for(BINDING_REGISTRY)
  ];
  const found = registry && Object.hasOwn(registry, url) ? registry[url] : undefined;
  return typeof found === 'function' ? (found as BindingLookup) : undefined;
}

/**
 * Where a host of the tree (the CLI that runs a driver, an executor's task threads) offers Node's
 * `module` to the tree's require banner (submit/compileModules.ts), for a Node without
 * process.getBuiltinModule (before 20.16).
 */
export const MODULE_API_KEY = 'wick.module';

/** Offers Node's `module` at Symbol.for(MODULE_API_KEY), where the tree looks for it. */
export function offerModuleApi(): void {
  const key = Symbol.for(MODULE_API_KEY);
  if (key in globalThis) return;
  Object.defineProperty(globalThis, key, { value: nodeModule });
}

/**
 * Beside the entry module: its imports alone, with its binding lookup (BINDING_FOOTER), so that
 * an executor can have what the entry imported without running the entry (the driver's program).
 */
export const ENTRY_SCOPE_SUFFIX = '.wick-scope.mjs';

/** Wick's own files in a tree, which each host writes for itself and which never travel. */
export const WICK_TREE_DIR = '.wick';

/** What `import … from 'wick'` becomes in the tree: a module that re-exports this host's Wick. */
export const WICK_SHIM = `${WICK_TREE_DIR}/wick.mjs`;

/** The tree's AppCode (entry and files), kept in the tree for whoever serves it. */
export const CODE_MANIFEST = `${WICK_TREE_DIR}/code.json`;

/** The shim's text for a host whose library is at `libUrl` (a file: URL). */
export function wickShim(libUrl: string): string {
  return `export * from ${JSON.stringify(libUrl)};\n`;
}

/**
 * What an executor writes before a shipped function on its line (task/compile.ts), which the
 * driver counts with when it lays the function out (app/functionOrigin.ts).
 */
export const RETURN_PREFIX = 'return (';
