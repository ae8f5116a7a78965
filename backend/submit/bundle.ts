import { access, constants, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join, resolve } from 'node:path';
import type * as esbuild from 'esbuild';
import { removeDeadOwnerDirs } from '../util/deadOwnerDirs.js';
import { importModule } from '../util/importModule.js';
import { distFile } from '../util/paths.js';
import { version } from '../util/version.js';
import { BundleCache } from './bundleCache.js';

export interface BundledApp {
  /** The original file. */
  source: string;
  /** An ES module bundle of it that resolves `wick` to the running Wick's library. */
  bundle: string;
}

/** Files that Node loads without a build step: those a require() or import() call may keep. */
const RUNS_AS_IS = /\.(?:js|cjs|mjs|json|node)$/;
/** Marks the resolution the plugin asks for itself, so that it does not answer it again. */
const LOOKUP = Symbol('wick-lookup');
/** Changes whenever the options below change what a bundle holds, so older cached ones miss. */
const BUNDLE_FORMAT = 'esm-node20-inline-map-1';

/**
 * Where bundles are made: `<temp>/wick-submit-<pid>-…`, the pid of the submit that owns it. A
 * client-mode submit removes its folder as it exits, which a signal (Ctrl-C, a kill) skips: the
 * next submit removes the folders whose process is gone (removeDeadOwnerDirs).
 */
const DIR_PREFIX = 'wick-submit';

/**
 * Bundles a submitted application (.js, .mjs, .ts) into one ES module with esbuild, so that
 * TypeScript runs without a compile step and `import { WickContext } from 'wick'` reaches the
 * library of the Wick that runs it. A syntax error is reported with file:line:column. The bundle
 * is in a folder of its own, which the caller removes; on failure, none is left.
 */
export async function bundleApp(appPath: string): Promise<BundledApp> {
  const source = resolve(appPath);
  const ext = extname(source);
  if (!['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'].includes(ext)) {
    throw new Error(
      `Application ${appPath} must be a .js, .mjs or .ts file, got "${ext || 'no extension'}"`,
    );
  }
  try {
    await access(source, constants.R_OK);
  } catch (err) {
    throw new Error(
      `Cannot read application ${appPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  // Not waited for: the folders of earlier submits do not hold this one up.
  void removeDeadOwnerDirs(DIR_PREFIX);
  const dir = await mkdtemp(join(tmpdir(), `${DIR_PREFIX}-${process.pid}-`));
  try {
    return await bundleInto(dir, source, appPath);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function bundleInto(dir: string, source: string, appPath: string): Promise<BundledApp> {
  const bundle = join(dir, `${basename(source, extname(source))}.mjs`);
  // The library as the CLI runs it (scripts/build.mjs): the driver reuses the modules the CLI has
  // loaded (see runAppHere).
  const lib = distFile('cli/lib.mjs');
  const cache = BundleCache.fromEnv();
  const key = BundleCache.key({ source, lib, wick: version, format: BUNDLE_FORMAT });
  if (await cache?.restore(key, bundle)) return { source, bundle };
  const startedAt = Date.now();
  // Loaded only on a cache miss: esbuild's start-up is most of a fresh bundle's cost.
  const { build: runEsbuild } = await importModule<typeof esbuild>('esbuild');
  let result: esbuild.BuildResult<{ metafile: true }>;
  try {
    result = await runEsbuild({
      entryPoints: [source],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      target: 'node20',
      // ESM, so that applications may await at top level; CommonJS dependencies inside the
      // bundle still need `require`.
      format: 'esm',
      banner: {
        js: "import { createRequire as __wickCreateRequire } from 'node:module'; const require = __wickCreateRequire(import.meta.url);",
      },
      sourcemap: 'inline',
      logLevel: 'silent',
      metafile: true,
      plugins: [
        {
          name: 'wick-library',
          setup(build: esbuild.PluginBuild) {
            build.onResolve({ filter: /^wick$/ }, () => ({ path: lib, external: true }));
            // A require() or import() call is left a call, to the absolute path of a JavaScript
            // file, rather than inlined: inside a function shipped to executors, an inlined
            // module would be a free variable of the bundle, while the call runs there as it does
            // here (executors resolve it from the application's folder; a path is the same one).
            build.onResolve({ filter: /.*/ }, async (args: esbuild.OnResolveArgs) => {
              if (args.kind !== 'require-call' && args.kind !== 'dynamic-import') return undefined;
              if (args.pluginData === LOOKUP || args.path === 'wick') return undefined;
              const found = await build.resolve(args.path, {
                kind: args.kind,
                importer: args.importer,
                resolveDir: args.resolveDir,
                pluginData: LOOKUP,
              });
              if (found.errors.length > 0 || found.external || !RUNS_AS_IS.test(found.path))
                return undefined;
              return { path: found.path, external: true };
            });
          },
        },
      ],
    });
  } catch (err) {
    const first = (err as esbuild.BuildFailure).errors?.[0];
    if (first) {
      const loc = first.location;
      const where = loc ? `${loc.file}:${loc.line}:${loc.column + 1}` : appPath;
      throw new Error(`Syntax error in ${where}: ${first.text}`);
    }
    throw err;
  }
  const inputs = Object.keys(result.metafile.inputs).map((p) => resolve(p));
  await cache?.store(key, bundle, inputs, startedAt);
  return { source, bundle };
}
