/**
 * The shape of an application's code tree (backend/submit/bundle.ts makes it; the driver and the
 * executors run it): one ES module per module of the application, under a root that also holds
 * the npm packages they use, plus these files of Wick's own.
 */

/** Each module of the tree exports this: its top-level bindings by name, for shipped functions. */
export const BINDING_EXPORT = '__wickBinding';

/** The footer that gives a module BINDING_EXPORT (a direct eval sees the module's own scope). */
export const BINDING_FOOTER = `export function ${BINDING_EXPORT}(name) { return eval(name); }`;

/** BINDING_FOOTER for a CommonJS module, on whatever object it exports (if it is one). */
export const CJS_BINDING_FOOTER = `try { Object.defineProperty(module.exports, '${BINDING_EXPORT}', { value: (name) => eval(name) }); } catch {}`;

/**
 * Beside the entry module: its imports alone, with BINDING_EXPORT, so that an executor can have
 * what the entry imported without running the entry (which is the driver's program).
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
