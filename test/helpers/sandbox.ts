/** For tests that confine processes with real bwrap: a sandbox over a work dir of the test's own. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chooseSandbox, type Sandbox } from '../../backend/worker/sandbox/Sandbox.js';

/** A bwrap sandbox as a worker makes one, its work dir removed after the test. */
export function bwrapSandbox(
  t: TestContext,
  name: string,
  options: { compileCache?: (workDir: string) => string } = {},
): { sandbox: Sandbox; workDir: string } {
  const workDir = mkdtempSync(join(tmpdir(), `wick-${name}-`));
  t.after(() => rmSync(workDir, { recursive: true, force: true }));
  const { sandbox } = chooseSandbox('bwrap', {
    workDir,
    localDirRoots: [],
    secretDirs: [],
    secretFiles: [],
    extraReadOnly: [],
    ...(options.compileCache ? { compileCache: options.compileCache(workDir) } : {}),
  });
  assert.ok(sandbox, 'bwrap is there');
  return { sandbox, workDir };
}
