import { access, constants, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { distFile } from '../../util/paths.js';

export interface BundledApp {
  /** The original file. */
  source: string;
  /** An ES module bundle of it that resolves `wick` to the running Wick's library. */
  bundle: string;
}

/**
 * Bundles a submitted application (.js, .mjs, .ts) into one ES module with esbuild, so that
 * TypeScript runs without a compile step and `import { WickContext } from 'wick'` reaches the
 * library of the Wick that runs it. A syntax error is reported with file:line:column.
 */
/** Files that Node loads without a build step: those a require() or import() call may keep. */
const RUNS_AS_IS = /\.(?:js|cjs|mjs|json|node)$/;
/** Marks the resolution the plugin asks for itself, so that it does not answer it again. */
const LOOKUP = Symbol('wick-lookup');

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
  const dir = await mkdtemp(join(tmpdir(), 'wick-submit-'));
  const bundle = join(dir, `${basename(source, ext)}.mjs`);
  const lib = distFile('wick-lib.cjs');
  try {
    await esbuild.build({
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
      plugins: [
        {
          name: 'wick-library',
          setup(build) {
            build.onResolve({ filter: /^wick$/ }, () => ({ path: lib, external: true }));
            // A require() or import() call is left a call, to the absolute path of a JavaScript
            // file, rather than inlined: inside a function shipped to executors, an inlined
            // module would be a free variable of the bundle, while the call runs there as it does
            // here (executors resolve it from the application's folder; a path is the same one).
            build.onResolve({ filter: /.*/ }, async (args) => {
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
  return { source, bundle };
}
