import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

/**
 * The extension inside a real VS Code (code-server) against a real local cluster: the in-host
 * suite and the UI flow (test/e2e/run.mjs). Skipped, with the reason, only when code-server cannot
 * be installed outside CI.
 */
test('the extension in a real VS Code (code-server): in-host tests and UI flow', {
  timeout: 900_000,
}, (t) => {
  const r = spawnSync(process.execPath, ['test/e2e/run.mjs'], {
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
  });
  process.stderr.write(r.stderr ?? '');
  if (r.status === 77) {
    t.skip(r.stderr.trim().split('\n').pop());
    return;
  }
  if (r.status !== 0) throw new Error(`test/e2e/run.mjs exited with ${r.status}`);
});
