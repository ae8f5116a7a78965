/**
 * CPU profiles of just part of a server process's life, for benchmarks: a server handles the
 * commands `profile-start {}` and `profile-stop {file}` (control.ts) with these, and the profile
 * (node:inspector, the same format as --cpu-prof) covers only the span between them.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import type { Command } from './control.js';

let session: Session | undefined;

/** Handles a profiling command; returns undefined for any other command. */
export async function profilingCommand(c: Command): Promise<unknown> {
  switch (c.cmd) {
    case 'profile-start':
      if (session) throw new Error('already profiling');
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      return { profiling: true };
    case 'profile-stop': {
      if (!session) throw new Error('not profiling');
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = undefined;
      writeFileSync(String(c.file), JSON.stringify(profile));
      return { file: c.file };
    }
    default:
      return undefined;
  }
}

/**
 * The environment for a cluster whose executors write CPU profiles into `dir`
 * (cpuProfilePreload.cjs, loaded through NODE_OPTIONS); none when `dir` is undefined.
 */
export function executorProfileEnv(dir: string | undefined): NodeJS.ProcessEnv {
  if (!dir) return {};
  return {
    NODE_OPTIONS: `--require ${fileURLToPath(new URL('cpuProfilePreload.cjs', import.meta.url))}`,
    WICK_BENCH_PROFILE_DIR: dir,
    WICK_BENCH_PROFILE_MATCH: 'executor',
    // A confined executor sees no dir outside its own to write its profile in (and the write
    // fails at exit, silently): profiled runs run their executors unconfined, which changes
    // nothing on the task path.
    WICK_EXECUTOR_SANDBOX: 'none',
  };
}
