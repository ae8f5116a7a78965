import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { shareCacheFiles } from '../../util/compileCache.js';
import { getLogger } from '../../util/log.js';
import { killProcessTree } from '../process/kill.js';
import { newMarker, spawnMarked } from '../process/launch.js';
import type { Sandbox } from './Sandbox.js';

const log = getLogger('Worker');

/** How long a warm-up may take before it is given up (the machine is very busy, or it hangs). */
const WARMUP_TIMEOUT_MS = 120_000;
/** The end of a failed warm-up's output that the worker's log quotes. */
const OUTPUT_TAIL = 2000;

/**
 * Fills the sandbox's code cache (Sandbox.compileCache) for the executor commands, which a confined
 * executor finds there read-only (bwrapArgs.ts): its empty $HOME has no cache, and compiling the
 * CLI bundle afresh cost each confined executor about 90 ms of CPU (bench notes, issue 31).
 *
 * The folder is the worker's own and made anew at every start: whatever was there (a worker that
 * ran applications open in this work dir before, whose code could write anywhere) is dropped. The
 * cache is written by a process that runs nothing but Wick's code — `wick executor-standby`, which
 * loads the executor's code, starts a task thread, compiles the protocol's checks and, its stdin
 * closed at once, exits — confined like an executor, with the folder writable for it alone. The
 * file it leaves serves `wick executor` too (the same bundle, compiled under the same V8 flags).
 *
 * Never throws: without a cache, confined executors only start slower. Returns a function that
 * stops a warm-up still running (the worker's shutdown).
 */
export function warmSandboxCompileCache(
  sandbox: Sandbox,
  command: readonly [string, string],
  killTimeoutMs: number,
  done: (ok: boolean) => void = () => {},
): () => Promise<void> {
  const dir = sandbox.compileCache;
  if (dir === undefined) {
    done(false);
    return async () => {};
  }
  let stop = async () => {};
  try {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const argv = sandbox.wrap(
      [command[0], command[1], 'executor-standby', '--threads', '1'],
      { cwd: dir, readWrite: [] },
      { compileCacheWritable: true },
    );
    const marker = newMarker();
    const child = spawnMarked(argv[0] as string, argv.slice(1), {
      cwd: dir,
      env: {},
      marker,
      stdin: 'ignore',
      out: 'pipe',
      err: 'pipe',
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
    };
    // spawnMarked's types assume descriptors; 'pipe' gives streams.
    for (const stream of [child.stdout, child.stderr] as unknown as (Readable | null)[])
      stream?.on('data', keep);
    let stopped = false;
    let exited = false;
    const kill = () =>
      child.pid === undefined || exited
        ? Promise.resolve()
        : killProcessTree(child.pid, marker, killTimeoutMs, false, undefined, { sandboxed: true });
    const timer = setTimeout(() => void kill(), WARMUP_TIMEOUT_MS);
    timer.unref();
    const started = Date.now();
    void child.then((r) => {
      exited = true;
      clearTimeout(timer);
      if (stopped) return done(false);
      try {
        if (r.exitCode !== 0) throw new Error(`it exited ${r.exitCode ?? r.signal}: ${output}`);
        shareCacheFiles(dir, 'executor-standby', 'executor');
        const files = readdirSync(dir).filter((f) => f.endsWith('.v8cache'));
        if (files.length === 0) throw new Error(`it wrote no cache file: ${output}`);
        log.info(
          `Confined executors' code cache ready in ${dir} (${Date.now() - started} ms, ${files.length} files)`,
        );
        done(true);
      } catch (err) {
        log.warn(
          `Could not fill the confined executors' code cache (they start slower): ${(err as Error).message.slice(0, OUTPUT_TAIL)}`,
        );
        done(false);
      }
    });
    stop = async () => {
      stopped = true;
      clearTimeout(timer);
      await kill();
    };
  } catch (err) {
    log.warn(
      `Could not fill the confined executors' code cache (they start slower): ${(err as Error).message}`,
    );
    done(false);
  }
  return () => stop();
}
