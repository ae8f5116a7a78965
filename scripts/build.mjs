#!/usr/bin/env node
// Bundles the backend CLI, the VS Code extension and (when present) the webview with esbuild.
// Usage: node scripts/build.mjs [--watch] [--production] [--outdir DIR] [--only NAME,…]
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

// VS Code's watch task reads these two lines to know when a rebuild starts and ends.
const watchMarkers = {
  name: 'watch-markers',
  setup(build) {
    build.onStart(() => console.log('[watch] build started'));
    build.onEnd((result) => {
      for (const e of result.errors) {
        console.error(`✘ [ERROR] ${e.text} (${e.location?.file}:${e.location?.line})`);
      }
      console.log('[watch] build finished');
    });
  },
};

// The CLI bundle's loader reads it as Latin-1 when it is all ASCII, ten times faster than as UTF-8
// (backend/util/compileCache.ts). esbuild escapes every non-ASCII character of code; only comments
// keep theirs, so this replaces those, one '?' per UTF-16 unit so that source map columns hold.
const asciiOnly = {
  name: 'ascii-only',
  setup(build) {
    build.onEnd(() => {
      const file = build.initialOptions.outfile;
      if (!existsSync(file)) return;
      const text = readFileSync(file, 'utf8');
      const nonAscii = /[\u0080-\uffff]/g;
      if (nonAscii.test(text)) writeFileSync(file, text.replace(nonAscii, '?'));
    });
  },
};

// The protocol's validators compiled ahead of time (backend/protocol/aotChecks.ts): TypeBox's code
// for every schema, generated from the sources being bundled, in place of that empty module, so
// that no Wick process compiles a validator at start (the first compile costs tens of ms). Not in
// watch mode, where a schema edited later would keep its old check: there they compile at run time.
const aotChecks = watch
  ? undefined
  : execFileSync(process.execPath, ['--import', 'tsx', 'scripts/gen-aot-checks.ts'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
const aotChecksPlugin = {
  name: 'aot-checks',
  setup(build) {
    if (aotChecks === undefined) return;
    build.onLoad({ filter: /[\\/]backend[\\/]protocol[\\/]aotChecks\.ts$/ }, () => ({
      contents: aotChecks,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  // Loggers are named after classes (Master, Worker…): keep the names in a minified build too.
  keepNames: true,
  logLevel: 'info',
  legalComments: 'none',
};

/**
 * The bundles that users' code runs with (the CLI runs a client-mode driver, the library, the
 * task threads) are not minified, in production either: their frames are in every stack a user
 * reads and in the debugger's call stack, and V8 names a method's class by the class's own name
 * in the source, which keepNames does not change (a killed app ended in `B4.abort`, `$B.handle`,
 * issue 29). Kept whole, a frame reads `TaskScheduler.abort (…/dist/cli/main.cjs:LINE)` at a line of
 * readable code, the debugger shows `class WickContext` as written, and what ships is what the
 * tests and benchmarks run. Measured against minifying them (issue 29): the .vsix 11,196,946 →
 * 11,547,290 bytes (+3 %); `wick --version` 202 → 239 ms of CPU (medians of 40, with its compile
 * cache, on a 2-core machine at load 18 where `node -e 0` took 166), whitespace-only minifying
 * saving about half of that but leaving one line per module.
 * The extension and the dashboard are no part of a user's stacks: they stay minified.
 */
const shownToUsers = { minify: false };

/** A CLI bundle: CommonJS for Node 20, run by dist/wick.cjs with a V8 code cache. */
const cli = {
  ...common,
  ...shownToUsers,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // piscina starts its threads from its own files, and esbuild (for `wick submit`) runs its own
  // binary: neither can be bundled.
  external: ['piscina', 'esbuild'],
  plugins: [aotChecksPlugin, asciiOnly],
};

const builds = [
  {
    ...cli,
    // One CommonJS bundle for every command, which dist/wick.cjs runs with a V8 code cache
    // (backend/util/compileCache.ts): ES modules would be faster to load only in chunks, and Node 20
    // caches compiled code for neither. Each command's modules are imported lazily in main.ts, so a
    // command runs only its own (esbuild wraps them to start on first import).
    entryPoints: ['backend/cli/main.ts'],
    outfile: 'dist/cli/main.cjs',
  },
  // The commands on the way from a submit to its first task, each alone in a bundle of its own
  // (backend/cli/commandNames.ts, OWN_BUNDLES), which a process of theirs reads instead.
  ...['submit', 'executor', 'driver-wrapper'].map((name) => ({
    ...cli,
    entryPoints: [`backend/cli/bundles/${name.replace(/-(\w)/g, (_, c) => c.toUpperCase())}.ts`],
    outfile: `dist/cli/${name}.cjs`,
  })),
  {
    ...common,
    entryPoints: ['backend/cli/entry.cts'],
    // Names the CLI bundle's code caches (backend/util/compileCache.ts).
    define: {
      WICK_BUILD_ID: JSON.stringify(`${Date.now().toString(36)}.${process.pid.toString(36)}`),
    },
    outfile: 'dist/wick.cjs',
    ...shownToUsers,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: false,
  },
  {
    ...common,
    entryPoints: ['backend/app/task/taskWorker.ts'],
    outfile: 'dist/task-worker.cjs',
    ...shownToUsers,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
  },
  {
    ...common,
    entryPoints: ['backend/app/index.ts'],
    outfile: 'dist/wick-lib.cjs',
    // A driver checks messages as the CLI's processes do. The other bundles (the extension, the
    // webview, the task threads) keep the empty module: they would carry the code for nothing,
    // and compile the rare check they make, as from source.
    plugins: [aotChecksPlugin],
    ...shownToUsers,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['piscina'],
  },
  {
    ...common,
    entryPoints: ['extension/extension.ts'],
    outfile: 'dist/extension.cjs',
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    // jsonc-parser's `main` is a UMD build that requires its parts at run time, which a bundle
    // does not have: its ES module build bundles.
    mainFields: ['module', 'main'],
  },
];

// The in-host test suite (test/e2e): loaded by a real VS Code through extensionTestsPath.
builds.push({
  ...common,
  entryPoints: ['test/e2e/host/index.ts'],
  outfile: 'dist/e2e/host-tests.cjs',
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode'],
});

if (existsSync('webview/main.ts')) {
  builds.push({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    // Preact's automatic JSX runtime; webview/main.ts imports CSS, which lands in dist/webview.css.
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: 'webview/tsconfig.json',
  });
}

// --outdir DIR builds into DIR instead of dist/ (packaging must not swap dist/ under running tests).
const at = process.argv.indexOf('--outdir');
if (at > 0) {
  const outdir = process.argv[at + 1];
  for (const b of builds) {
    if (b.outfile) b.outfile = b.outfile.replace(/^dist\//, `${outdir}/`);
    if (b.outdir) b.outdir = b.outdir.replace(/^dist\//, `${outdir}/`);
  }
}

// --only a,b builds only the bundles of those names (`main` is all of dist/cli/), for a test that
// needs a production build of a few of them.
const cliBundle = builds[0].outfile;
const cliDir = cliBundle.replace(/main\.cjs$/, '');
const only = process.argv.indexOf('--only');
if (only > 0) {
  const names = new Set(process.argv[only + 1].split(','));
  // `main` is the CLI: its bundle and the commands' own, which dist/wick.cjs runs in its place.
  const nameOf = (b) =>
    b.outfile.startsWith(cliDir) ? 'main' : b.outfile.replace(/^.*\//, '').replace(/\..*$/, '');
  const picked = builds.filter((b) => names.has(nameOf(b)));
  if (new Set(picked.map(nameOf)).size !== names.size) {
    throw new Error(
      `--only ${process.argv[only + 1]}: expected names among ${builds.map((b) => b.outfile)}`,
    );
  }
  builds.splice(0, builds.length, ...picked);
} else copyProjectTypes(at > 0 ? process.argv[at + 1] : 'dist');

if (watch) {
  const contexts = await Promise.all(
    builds.map((b) =>
      esbuild.context({ ...b, logLevel: 'silent', plugins: [...(b.plugins ?? []), watchMarkers] }),
    ),
  );
  await Promise.all([...contexts.map((c) => c.watch()), writeLibraryFacade(cliBundle)]);
} else {
  // Earlier builds left ES module chunks in dist/cli/.
  if (builds.some((b) => b.outfile === cliBundle)) rmSync(cliDir, { recursive: true, force: true });
  await Promise.all([...builds.map((b) => esbuild.build(b)), writeLibraryFacade(cliBundle)]);
}

/**
 * dist/types: what the extension puts in a user's project so that `import … from 'wick'` and
 * Node's globals type-check (extension/project/projectTypes.ts): Wick's declarations (npm run
 * types) and the @types/node Wick is built with (with undici-types, which it imports).
 */
function copyProjectTypes(outdir) {
  const types = join(outdir, 'types');
  rmSync(types, { recursive: true, force: true });
  cpSync('extension/types/wick', join(types, 'wick'), { recursive: true });
  for (const [from, to] of [
    ['@types/node', 'node'],
    ['undici-types', 'undici-types'],
  ])
    cpSync(join('node_modules', from), join(types, to), {
      recursive: true,
      filter: (src) => !src.endsWith('.md'),
    });
}

/**
 * dist/cli/lib.mjs: the `wick` that applications run by `wick submit` import (backend/submit/
 * bundle.ts points them here). It hands them the library the CLI has loaded, which runAppHere
 * puts at Symbol.for('wick.library'), so that the application and the CLI share one copy; loaded
 * any other way, it falls back to dist/wick-lib.cjs.
 */
async function writeLibraryFacade(cliBundle) {
  const { metafile } = await esbuild.build({
    entryPoints: ['backend/app/index.ts'],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    logLevel: 'silent',
  });
  const names = Object.values(metafile.outputs)
    .flatMap((o) => o.exports)
    .sort();
  const file = cliBundle.replace(/main\.cjs$/, 'lib.mjs');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    [
      '// Written by scripts/build.mjs: the library the Wick CLI runs, for the applications it runs.',
      "import { createRequire } from 'node:module';",
      "const lib = globalThis[Symbol.for('wick.library')] ?? createRequire(import.meta.url)('../wick-lib.cjs');",
      ...names.map((n) => `export const ${n} = lib.${n};`),
      '',
    ].join('\n'),
  );
}
