#!/usr/bin/env node
// Bundles the backend CLI, the VS Code extension and (when present) the webview with esbuild.
// Usage: node scripts/build.mjs [--watch] [--production] [--outdir DIR]
import { existsSync, rmSync } from 'node:fs';
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

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  // Loggers are named after classes (Master, Worker…): keep the names in a minified build too.
  keepNames: true,
  logLevel: 'info',
  legalComments: 'none',
};

const builds = [
  {
    ...common,
    // ES modules split into chunks, so that each command loads only its own code: an executor
    // or `wick status` does not pay for the master, the web UI or the agent (start-up time is
    // most of what a submit waits for). dist/wick.cjs is the stable entry that loads main.mjs.
    // lib.mjs is the library (`wick`) that applications run by the CLI import: the same modules
    // as the CLI's, loaded once (dist/wick-lib.cjs is the package's export for other programs).
    entryPoints: { main: 'backend/cli/main.ts', lib: 'backend/app/index.ts' },
    outdir: 'dist/cli',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunk-[hash]',
    platform: 'node',
    target: 'node20',
    format: 'esm',
    // CommonJS dependencies inside the chunks still call require().
    banner: {
      js: "import { createRequire as __wickCreateRequire } from 'node:module'; const require = __wickCreateRequire(import.meta.url);",
    },
    // piscina starts its threads from its own files, and esbuild (for `wick submit`) runs its own
    // binary: neither can be bundled.
    external: ['piscina', 'esbuild'],
  },
  {
    ...common,
    entryPoints: ['backend/cli/entry.cts'],
    outfile: 'dist/wick.cjs',
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: false,
  },
  {
    ...common,
    entryPoints: ['backend/app/task/taskWorker.ts'],
    outfile: 'dist/task-worker.cjs',
    platform: 'node',
    target: 'node20',
    format: 'cjs',
  },
  {
    ...common,
    entryPoints: ['backend/app/index.ts'],
    outfile: 'dist/wick-lib.cjs',
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

if (watch) {
  const contexts = await Promise.all(
    builds.map((b) => esbuild.context({ ...b, logLevel: 'silent', plugins: [watchMarkers] })),
  );
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  // Chunk names change with their contents: drop the previous build's.
  for (const b of builds) if (b.splitting) rmSync(b.outdir, { recursive: true, force: true });
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
