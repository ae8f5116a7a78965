import { isAscii } from 'node:buffer';
import {
  closeSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { Script } from 'node:vm';

/**
 * Runs Wick's CLI bundle (dist/cli/main.cjs) with a V8 code cache, so that a command does not
 * parse and compile the same code on every start. Node 22 offers this as
 * module.enableCompileCache(); Node 20 does not, so Wick does it the way v8-compile-cache does
 * (vm.Script with cachedData), for its one bundle: measured with `wick submit examples/pi.ts`
 * against the ES module chunks it replaced, a submit reaches its first executor and exits sooner
 * (bench/pi's end-to-end figures show by how much on the machine at hand).
 *
 * There is one cache file per command (`submit`, `status`, `master`…): each holds the functions
 * that command compiled in its first run, which is what its next run needs. A file is written once,
 * when the command's process exits without a usable cache, and only if V8's flags are still those
 * it started with (V8 refuses a cache made under other flags). V8 checks a cache against its
 * version, its flags and the source's length only, so the file's name carries the rest of what
 * identifies the bundle: its build (an id scripts/build.mjs makes), size and mtime.
 */
export interface CompileCacheOptions {
  /** The folder for cache files; undefined runs without a cache. */
  dir: string | undefined;
  /** Names the cache file: the command being run. */
  key: string;
  /** The bundle's build id (scripts/build.mjs): a package's files may all have one mtime. */
  build: string;
}

/** What the loader hands the bundle besides CommonJS's five: see backend/util/importModule.ts. */
export type ImportModule = (specifier: string) => Promise<unknown>;

/** Cache files kept in the folder; the oldest beyond it are dropped when one is written. */
const MAX_FILES = 64;

/** The cache folder: WICK_COMPILE_CACHE (a folder, or `off`), else ~/.cache/wick/compile. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const setting = env.WICK_COMPILE_CACHE;
  if (setting === 'off') return undefined;
  if (setting) return setting;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'wick', 'compile');
}

/**
 * The cache key for a command line: its command when `commands` has it, else `other` (options
 * first, help, a typo), so that the folder holds a bounded set.
 */
export function compileCacheKey(argv: readonly string[], commands: ReadonlySet<string>): string {
  const command = argv[2] ?? '';
  return commands.has(command) ? command : 'other';
}

/**
 * Loads and runs a CommonJS bundle as require() would, compiled with the cache when there is a
 * usable one. `importModule` is the bundle's import(): V8 loses import()'s context in code
 * compiled from a cache (nodejs/node#43663), so the bundle calls the loader's instead.
 */
export function runBundle(
  file: string,
  options: CompileCacheOptions,
  importModule: ImportModule,
): { exports: unknown; cache: 'hit' | 'miss' | 'off' } {
  const source = readWrapped(file);
  const tag = cachedDataVersionTag();
  const cacheFile = options.dir ? join(options.dir, cacheFileName(file, options, tag)) : undefined;
  let cachedData: Buffer | undefined;
  if (cacheFile) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // No cache yet: this run makes it.
    }
  }
  const script = new Script(source, { filename: file, cachedData });
  const hit = cachedData !== undefined && script.cachedDataRejected === false;
  if (cacheFile && !hit) {
    process.once('exit', () =>
      saveCache(script, cacheFile, cacheFilePrefix(file, options.key, tag), tag),
    );
  }
  const module = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
    importModule,
  );
  module.loaded = true;
  return { exports: module.exports, cache: cacheFile ? (hit ? 'hit' : 'miss') : 'off' };
}

// On the source's first line, so that line numbers in stack traces stay those of the file.
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname, __wickImport) {';
const WRAP_TAIL = '\n})';

/** The bundle's source as runBundle compiles it: a cache is made for, and checked against, this. */
export function wrapBundle(source: string): string {
  return `${WRAP_HEAD}${source}${WRAP_TAIL}`;
}

/**
 * wrapBundle(the file's text), read into one buffer with the wrapper around it and decoded once:
 * wrapping the decoded text instead made a two-part string that V8 then copied whole into a flat
 * one to compile, 12 ms of CPU for the 4.2 MB bundle (medians of 6, against 62 in all).
 */
function readWrapped(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafeSlow(WRAP_HEAD.length + size + WRAP_TAIL.length);
    let end = bytes.write(WRAP_HEAD, 0, 'latin1');
    for (let n = 1; n > 0 && end < WRAP_HEAD.length + size; end += n) {
      n = readSync(fd, bytes, end, WRAP_HEAD.length + size - end, null);
    }
    end += bytes.write(WRAP_TAIL, end, 'latin1');
    const wrapped = bytes.subarray(0, end);
    // Latin-1 is ASCII's fast path: V8 makes a one-byte string without decoding (scripts/build.mjs
    // keeps the bundle ASCII); UTF-8 took 10 ms of a 2.4 MB bundle's start here.
    return isAscii(wrapped) ? wrapped.toString('latin1') : wrapped.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * `<command>-<V8 tag>-<install>-<build>-<size>-<mtime>.v8cache`: each Node (by V8's tag) and each
 * Wick install (by its bundle's path) keeps its own, so that two of them in turn do not evict each
 * other's; a rebuild replaces its install's.
 */
function cacheFileName(file: string, o: CompileCacheOptions, tag: number): string {
  const { size, mtimeMs } = statSync(file);
  return `${cacheFilePrefix(file, o.key, tag)}${o.build}-${size}-${Math.trunc(mtimeMs)}.v8cache`;
}

function cacheFilePrefix(file: string, key: string, tag: number): string {
  return `${key}-${tag}-${fnv1a(file).toString(36)}-`;
}

/**
 * Makes the cache files of command `from` in `dir` serve command `to` as well (hard links; one of
 * `to` already there is kept): they hold the compiled bundle, whichever command made them.
 * Returns how many it linked.
 */
export function shareCacheFiles(dir: string, from: string, to: string): number {
  let linked = 0;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${from}-`) || !name.endsWith('.v8cache')) continue;
    const alias = `${to}-${name.slice(from.length + 1)}`;
    try {
      linkSync(join(dir, name), join(dir, alias));
      linked++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return linked;
}

/** A short hash of a path, for a file name (node:crypto alone takes milliseconds to load). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Writes the cache atomically (a reader never sees half a file) and drops the key's older ones. */
function saveCache(script: Script, cacheFile: string, prefix: string, tag: number): void {
  // Flags changed since start: V8 would refuse this cache in the next run, which starts with the old.
  if (cachedDataVersionTag() !== tag) return;
  try {
    const dir = dirname(cacheFile);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, cacheFile);
    // This command's caches of this install's earlier builds, under this Node; then the oldest
    // beyond MAX_FILES (other installs, other Nodes).
    const name = cacheFile.slice(dir.length + 1);
    const kept: { file: string; mtimeMs: number }[] = [];
    for (const other of readdirSync(dir)) {
      if (other === name || !other.endsWith('.v8cache')) continue;
      const file = join(dir, other);
      if (other.startsWith(prefix)) unlinkSync(file);
      else kept.push({ file, mtimeMs: statSync(file).mtimeMs });
    }
    kept.sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const old of kept.slice(MAX_FILES - 1)) unlinkSync(old.file);
  } catch {
    // A cache is only ever a speed-up: a read-only or full disk just leaves the next start slower.
  }
}
