import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type * as esbuild from 'esbuild';
import {
  BINDING_FOOTER,
  CJS_BINDING_FOOTER,
  MODULE_API_KEY,
  WICK_SHIM,
} from '../util/shippedCode.js';
import type { ModuleGraph } from './moduleGraph.js';

/** Marks the resolution the plugin asks for itself, so that it does not answer it again. */
const LOOKUP = Symbol('wick-lookup');

/** CommonJS modules stay CommonJS (`.cjs`); the others become ES modules (`.mjs`). */
const COMMONJS = new Set(['.cjs', '.cts']);

/**
 * Where each module of the graph goes in the tree at `out`: the same path under the root, as
 * `.mjs` or `.cjs`; JSON as `<name>.json.mjs` to import (and as itself, to require).
 */
export function outputPath(graph: ModuleGraph, out: string, file: string): string {
  const rel = relative(graph.root, file);
  if (extname(file) === '.json') return join(out, `${rel}.mjs`);
  const ext = COMMONJS.has(extname(file)) ? '.cjs' : '.mjs';
  return join(out, `${rel.slice(0, rel.length - extname(rel).length)}${ext}`);
}

/**
 * Compiles each module of the application into a module of its own in `out`, its imports left
 * imports (to the compiled path of an application module, to `wick`'s shim, or to the npm package
 * as named): not bundled, so that a function's source keeps the names its module gave what it
 * imported, and an executor can give it the same things (see app/closure.ts).
 */
export async function compileModules(
  build: typeof esbuild.build,
  graph: ModuleGraph,
  out: string,
): Promise<void> {
  const own = new Set([...graph.modules, ...graph.json]);
  const shim = join(out, WICK_SHIM);
  const imports: esbuild.Plugin = {
    name: 'wick-tree',
    setup(b: esbuild.PluginBuild) {
      b.onResolve({ filter: /.*/ }, async (args: esbuild.OnResolveArgs) => {
        if (args.kind === 'entry-point' || args.pluginData === LOOKUP) return undefined;
        const from = dirname(outputPath(graph, out, args.importer));
        if (args.path === 'wick') return { path: specifier(from, shim), external: true };
        const found = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: LOOKUP,
        });
        if (found.errors.length > 0) return undefined;
        if (found.external || !own.has(found.path)) return { path: args.path, external: true };
        const target =
          args.kind === 'require-call' && extname(found.path) === '.json'
            ? join(out, relative(graph.root, found.path))
            : outputPath(graph, out, found.path);
        return { path: specifier(from, target), external: true };
      });
    },
  };
  const common = {
    bundle: true,
    write: false,
    outdir: out,
    outbase: graph.root,
    outExtension: { '.js': '.mjs' },
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: 'inline',
    logLevel: 'silent',
    footer: { js: BINDING_FOOTER },
    plugins: [imports],
  } satisfies esbuild.BuildOptions;
  const esm = graph.modules.filter((m) => !COMMONJS.has(extname(m)));
  const cjs = graph.modules.filter((m) => COMMONJS.has(extname(m)));
  if (esm.length > 0) {
    // CommonJS `require` in an ES module, for what the application requires; only in the modules
    // that name it: every module-level name shows in the debugger's Module scope beside the
    // user's own (issue 29), and esbuild's banner is the one way to add it that keeps the
    // module's source map right, so those modules are compiled again with it.
    const first = await build({ ...common, entryPoints: esm });
    const requiring = esm.filter((m) => {
      const f = first.outputFiles.find((o) => o.path === outputPath(graph, out, m));
      return f === undefined || NAMES_REQUIRE.test(withoutInlineMap(f.text));
    });
    const wanted = new Set(requiring.map((m) => outputPath(graph, out, m)));
    await writeOutput({
      ...first,
      outputFiles: first.outputFiles.filter((o) => !wanted.has(o.path)),
    });
    if (requiring.length > 0) {
      const second = await build({
        ...common,
        entryPoints: requiring,
        banner: { js: REQUIRE_BANNER },
      });
      await writeOutput({
        ...second,
        outputFiles: second.outputFiles.map((f) => ({ ...f, text: withoutRequireHelper(f.text) })),
      });
    }
  }
  if (cjs.length > 0) {
    await writeOutput(
      await build({
        ...common,
        entryPoints: cjs,
        format: 'cjs',
        outExtension: { '.js': '.cjs' },
        banner: {},
        // What a CommonJS module exports is its own to choose; a binding lookup is added where it can be.
        footer: { js: CJS_BINDING_FOOTER },
      }),
    );
  }
  if (graph.json.length > 0) {
    await writeOutput(
      await build({ ...common, entryPoints: graph.json, entryNames: '[dir]/[name].json' }),
    );
    for (const j of graph.json) {
      const raw = join(out, relative(graph.root, j));
      await mkdir(dirname(raw), { recursive: true });
      await copyFile(j, raw);
    }
  }
}

/**
 * A CommonJS `require` for an ES module of the tree, relative to the module, declaring no other
 * name (an import of createRequire would show in the debugger's Module scope, issue 29): Node's
 * `module` from process.getBuiltinModule (Node 20.16 and later), else as the host offers it.
 */
export const REQUIRE_BANNER = `const require = (globalThis.process.getBuiltinModule?.('node:module') ?? globalThis[Symbol.for(${JSON.stringify(MODULE_API_KEY)})]).createRequire(import.meta.url);`;

/**
 * esbuild's helper for a `require` call in an ES module, `var __require = …;`, at the top of each
 * module that has one: a name of its own in the debugger's Module scope (issue 29), and nothing
 * the banner's `require` does not do. Blanked out, with its newlines kept, and each use
 * (`__require(…)`, `__require.resolve(…)`) made `  require` — every later position the same, so
 * the module's source map stays right. esbuild names a user's own `__require` otherwise
 * (`__require2`); a string of the user's spelling `__require` would change too.
 */
const REQUIRE_HELPER = /^var __require = [\s\S]*?\n\}\);\n/m;

export function withoutRequireHelper(text: string): string {
  const helper = REQUIRE_HELPER.exec(text);
  if (!helper) return text;
  const blank = helper[0].replace(/[^\n]/g, ' ');
  const body = text.slice(helper.index + helper[0].length);
  return `${text.slice(0, helper.index)}${blank}${body.replace(/\b__require\b/g, '  require')}`;
}

/** A compiled module that names `require` (a call, `require.resolve`, esbuild's __require). */
const NAMES_REQUIRE = /\brequire\b/;

function withoutInlineMap(text: string): string {
  const m = INLINE_MAP.exec(text);
  return m ? text.slice(0, m.index) : text;
}

/**
 * Writes what esbuild made, each module's inline source map naming its original files by absolute
 * path: esbuild writes them relative to the module, which holds only where the tree was built — a
 * cluster-mode driver runs the tree its worker fetched into a folder of another depth, and a cached
 * tree is restored elsewhere. The stacks of the driver and the positions of shipped functions
 * (app/functionOrigin.ts) then name the file the user edits.
 */
async function writeOutput(result: esbuild.BuildResult<{ write: false }>): Promise<void> {
  for (const f of result.outputFiles) {
    await mkdir(dirname(f.path), { recursive: true });
    await writeFile(f.path, withAbsoluteSources(f.text, dirname(f.path)));
  }
}

const INLINE_MAP = /(\/\/# sourceMappingURL=data:application\/json;base64,)([A-Za-z0-9+/=]+)(\s*)$/;

export function withAbsoluteSources(text: string, dir: string): string {
  const m = INLINE_MAP.exec(text);
  if (!m) return text;
  const map = JSON.parse(Buffer.from(m[2] as string, 'base64').toString('utf8')) as {
    sources?: string[];
    sourceRoot?: string;
  };
  const root = map.sourceRoot ?? '';
  map.sources = (map.sources ?? []).map((s) =>
    isAbsolute(root + s) ? root + s : resolve(dir, root + s),
  );
  delete map.sourceRoot;
  const encoded = Buffer.from(JSON.stringify(map)).toString('base64');
  return `${text.slice(0, m.index)}${m[1]}${encoded}${m[3]}`;
}

/** An import specifier from a module in `fromDir` to `file`. */
function specifier(fromDir: string, file: string): string {
  const rel = relative(fromDir, file).split(sep).join('/');
  return rel.startsWith('../') ? rel : `./${rel}`;
}
