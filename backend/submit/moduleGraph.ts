import { existsSync } from 'node:fs';
import { dirname, extname, relative, resolve, sep } from 'node:path';
import type * as esbuild from 'esbuild';

/** What an application is made of, as esbuild finds it by following its imports from the entry. */
export interface ModuleGraph {
  entry: string;
  /** The application's own JavaScript and TypeScript modules (absolute paths), entry included. */
  modules: string[];
  /** JSON files its modules import. */
  json: string[];
  /** The folders of the npm packages they use (…/node_modules/name or …/node_modules/@scope/name). */
  packages: string[];
  /** Every file read, for the bundle cache's stamps. */
  inputs: string[];
  /** The deepest folder that holds all of the above. */
  root: string;
}

const CODE = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);

/**
 * Follows the imports of `entry` with esbuild (nothing written), so that the tree holds exactly
 * what the application uses. `wick` is left out: each host brings its own. A syntax error is
 * esbuild's to report, with its file and line.
 */
export async function findModuleGraph(
  build: typeof esbuild.build,
  entry: string,
): Promise<ModuleGraph> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    outdir: dirname(entry),
    platform: 'node',
    target: 'node20',
    format: 'esm',
    logLevel: 'silent',
    metafile: true,
    plugins: [
      {
        name: 'wick-external',
        setup(b: esbuild.PluginBuild) {
          b.onResolve({ filter: /^wick$/ }, () => ({ path: 'wick', external: true }));
        },
      },
    ],
  });
  const inputs = Object.keys(result.metafile.inputs)
    .map((p) => resolve(p))
    .filter((p) => existsSync(p));
  const modules: string[] = [];
  const json: string[] = [];
  const packages = new Set<string>();
  for (const p of inputs) {
    const pkg = packageFolder(p);
    if (pkg) packages.add(pkg);
    else if (extname(p) === '.json') json.push(p);
    else if (CODE.has(extname(p))) modules.push(p);
  }
  const folders = [dirname(entry), ...modules.map(dirname), ...json.map(dirname)];
  for (const pkg of packages) folders.push(dirname(pkg));
  return { entry, modules, json, packages: [...packages], inputs, root: commonFolder(folders) };
}

/** The npm package folder a file is in, if it is in one. */
export function packageFolder(path: string): string | undefined {
  const parts = path.split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length - 1) return undefined;
  const scoped = parts[at + 1]?.startsWith('@');
  return parts.slice(0, at + (scoped ? 3 : 2)).join(sep);
}

function commonFolder(folders: readonly string[]): string {
  let common = folders[0] as string;
  for (const f of folders) {
    while (relative(common, f).startsWith('..')) common = dirname(common);
  }
  return common;
}
