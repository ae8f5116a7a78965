import {
  access,
  constants,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as esbuild from 'esbuild';
import { describeFiles } from '../files/describeFiles.js';
import { toShippedPath } from '../files/shippedPath.js';
import type { AppCode } from '../protocol/files.js';
import { removeDeadOwnerDirs } from '../util/deadOwnerDirs.js';
import { importModule } from '../util/importModule.js';
import { distFile } from '../util/paths.js';
import { CODE_MANIFEST, WICK_SHIM, WICK_TREE_DIR, wickShim } from '../util/shippedCode.js';
import { version } from '../util/version.js';
import { BundleCache } from './bundleCache.js';
import { compileModules, outputPath } from './compileModules.js';
import { writeEntryScope } from './entryScope.js';
import { findModuleGraph, type ModuleGraph } from './moduleGraph.js';

export interface BundledApp {
  /** The original file. */
  source: string;
  /** The compiled entry module, in `root`: what the driver runs. */
  bundle: string;
  /** The application's code tree (see util/shippedCode.ts), a folder of its own. */
  root: string;
  /** What executors fetch of it. */
  code: AppCode;
}

let esbuildStarted = false;

/**
 * esbuild, its service started: a child process that takes this process's environment as it
 * starts, where a `wick submit` given WICK_AUTH_SECRET keeps the secret (for the daemons of
 * `--master local`; backend/cli/startupSecrets.ts masks only what /proc shows of this process).
 * The service has no use for it, and any process of the user could read it in the service's
 * /proc/<pid>/environ for as long as the submit runs: it is started without it (the spawn is
 * synchronous, inside `initialize`).
 */
async function loadEsbuild(): Promise<typeof esbuild> {
  const api = await importModule<typeof esbuild>('esbuild');
  if (esbuildStarted) return api;
  esbuildStarted = true;
  const secret = process.env.WICK_AUTH_SECRET;
  delete process.env.WICK_AUTH_SECRET;
  try {
    await api.initialize({});
  } finally {
    if (secret !== undefined) process.env.WICK_AUTH_SECRET = secret;
  }
  return api;
}

/**
 * Changes whenever the options below change what a tree holds, so older cached ones miss (4: the
 * modules register their binding lookup instead of exporting it, util/shippedCode.ts; 5: no
 * esbuild __require helper, compileModules.ts).
 */
const BUNDLE_FORMAT = 'esm-tree-5';

/**
 * Where bundles are made: `<temp>/wick-submit-<pid>-…`, the pid of the submit that owns it. A
 * client-mode submit removes its folder as it exits, which a signal (Ctrl-C, a kill) skips: the
 * next submit removes the folders whose process is gone (removeDeadOwnerDirs).
 */
const DIR_PREFIX = 'wick-submit';

/**
 * Compiles a submitted application (.js, .mjs, .ts) with esbuild into its code tree (see
 * util/shippedCode.ts): what the driver runs and executors fetch, so that TypeScript runs without
 * a compile step, a task may use what its module imports, and `import { WickContext } from 'wick'`
 * reaches the library of the Wick that runs it. A syntax error is reported with
 * file:line:column. The tree is a folder of its own, which the caller removes; on failure, none
 * is left.
 */
export async function bundleApp(appPath: string, shownFrom?: string): Promise<BundledApp> {
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
    return await bundleInto(dir, source, appPath, shownFrom);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * `shownFrom`: the folder a syntax error's first line names the file from (default: this
 * process's working folder); the VS Code agent bundles from elsewhere than its driver runs.
 */
async function bundleInto(
  dir: string,
  source: string,
  appPath: string,
  shownFrom?: string,
): Promise<BundledApp> {
  // The library as the CLI runs it (scripts/build.mjs): the driver reuses the modules the CLI has
  // loaded (see runAppHere).
  const lib = distFile('cli/lib.mjs');
  const cache = BundleCache.fromEnv();
  const key = BundleCache.key({ source, lib, wick: version, format: BUNDLE_FORMAT });
  if (await cache?.restore(key, dir)) return await treeOf(dir, source, lib);
  const startedAt = Date.now();
  // Loaded only on a cache miss: esbuild's start-up is most of a fresh bundle's cost.
  const { build } = await loadEsbuild();
  let graph: ModuleGraph;
  try {
    graph = await findModuleGraph(build, source);
    await compileModules(build, graph, dir);
  } catch (err) {
    const errors = (err as esbuild.BuildFailure).errors ?? [];
    const first = errors[0];
    if (first) {
      const loc = first.location;
      const file =
        shownFrom === undefined ? loc?.file : relative(shownFrom, resolve(loc?.file ?? ''));
      const where = loc ? `${file}:${loc.line}:${loc.column + 1}` : appPath;
      // Then each error as esbuild prints it, one a line, by absolute path (docs/protocol.md):
      // what an editor turns into Problems entries.
      const lines = errors.map((e) => {
        const l = e.location;
        return l
          ? `${resolve(l.file)}:${l.line}:${l.column + 1}: error: ${e.text}`
          : `${source}: error: ${e.text}`;
      });
      throw new Error(`Syntax error in ${where}: ${first.text}\n${lines.join('\n')}`);
    }
    throw err;
  }
  const entry = outputPath(graph, dir, source);
  await writeEntryScope(entry);
  await linkPackages(graph, dir);
  const paths = await listTree(dir);
  const code: AppCode = {
    entry: toShippedPath(relative(dir, entry)),
    files: await describeFiles(dir, paths),
  };
  await mkdir(join(dir, WICK_TREE_DIR), { recursive: true });
  await writeFile(join(dir, CODE_MANIFEST), JSON.stringify(code));
  await cache?.store(key, dir, graph.inputs, startedAt);
  return await treeOf(dir, source, lib);
}

/** The tree in `dir` as this host runs it: with its own `wick` (the shim is never cached or shipped). */
async function treeOf(dir: string, source: string, lib: string): Promise<BundledApp> {
  const code = JSON.parse(await readFile(join(dir, CODE_MANIFEST), 'utf8')) as AppCode;
  await writeFile(join(dir, WICK_SHIM), wickShim(pathToFileURL(lib).href));
  return { source, bundle: join(dir, ...code.entry.split('/')), root: dir, code };
}

/**
 * The npm packages, linked into the tree where they were beside the application, so that the
 * driver resolves them as before; executors fetch their files (listTree follows the links).
 */
async function linkPackages(graph: ModuleGraph, dir: string): Promise<void> {
  for (const pkg of graph.packages) {
    const at = join(dir, relative(graph.root, pkg));
    await mkdir(dirname(at), { recursive: true });
    await symlink(pkg, at, 'dir');
  }
}

/**
 * Every file of the tree but Wick's own, as shipped paths, following links into packages. A
 * folder met again through a link (a link back up the tree, as some package layouts have) is not
 * walked again: a cycle would never end.
 */
async function listTree(dir: string, sub = '', seen = new Set<string>()): Promise<string[]> {
  const here = await realpath(join(dir, sub));
  if (seen.has(here)) return [];
  seen.add(here);
  const out: string[] = [];
  for (const e of await readdir(join(dir, sub), { withFileTypes: true })) {
    const rel = sub ? `${sub}/${e.name}` : e.name;
    if (rel === WICK_TREE_DIR) continue;
    const isDir =
      e.isDirectory() || (e.isSymbolicLink() && (await stat(join(dir, rel))).isDirectory());
    if (isDir) out.push(...(await listTree(dir, rel, seen)));
    else out.push(rel);
  }
  return out;
}
