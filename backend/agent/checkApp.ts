import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { bundleApp } from '../submit/bundle.js';
import { checkOutputId, type DriverOutputSink, sendInChunks } from './driverOutput.js';

/**
 * CheckApplication: bundles the application here, in the agent, as the submit's driver would, so
 * that a syntax error is told at once, while the local cluster is still starting, rather than
 * after it (the 15.5 s behind "Submitting…"). A failure is reported as a submit's is: the
 * driver's words on the run's output (`outputId`), then its end, before the answer, so that the
 * editor makes the same Problems entries of it. A clean bundle lands in the bundle cache
 * (backend/submit/bundleCache.ts), which the submit's own bundle then restores.
 */
export async function checkApplication(
  p: { file: string; outputId?: string },
  output: DriverOutputSink,
): Promise<{ success: boolean; message: string }> {
  const outputId = checkOutputId(p.outputId);
  if (typeof p.file !== 'string' || p.file.length === 0 || p.file.length > 4096)
    throw new Error(`file must be a path of 1 to 4096 characters, got ${JSON.stringify(p.file)}`);
  const message = await compileError(p.file);
  if (message === undefined) return { success: true, message: `${p.file} compiles` };
  if (outputId) {
    // The words `wick submit` prints for it, so that the output reads the same either way.
    sendInChunks(output, outputId, 'stderr', `wick: ${message}\n`);
    output.driverExited(outputId, 1, 'the application did not compile');
  }
  return { success: false, message };
}

/** The bundle's error for `file` (what `wick submit` would print), or undefined when it compiles. */
export async function compileError(file: string): Promise<string | undefined> {
  try {
    // Named from the file's folder, where the submit's driver runs: the same words either way.
    const bundled = await bundleApp(file, dirname(file));
    await rm(bundled.root, { recursive: true, force: true });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
