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
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  if (r.status === 77) {
    t.skip(r.stderr.trim().split('\n').pop());
    return;
  }
  // CI keeps only the failure summary of a long run: the summary itself must say what failed.
  if (r.status !== 0) {
    throw new Error(
      `test/e2e/run.mjs exited with ${r.status}\n${whatFailed(r.stdout ?? '', r.stderr ?? '')}`,
    );
  }
});

/** The failed in-host steps (from the report run.mjs prints) and the ends of its output. */
function whatFailed(stdout: string, stderr: string): string {
  const tail = (s: string, n: number) => s.trim().split('\n').slice(-n).join('\n');
  const parts: string[] = [];
  const report = stdout.match(/^\{\n {2}"results"[\s\S]*?^\}$/m);
  if (report) {
    try {
      const { results } = JSON.parse(report[0]) as {
        results: { name: string; ok: boolean; error?: string }[];
      };
      for (const r of results.filter((r) => !r.ok))
        parts.push(`in-host step failed: ${r.name}\n${r.error}`);
    } catch {}
  }
  parts.push(`end of stdout:\n${tail(stdout, 15)}`, `end of stderr:\n${tail(stderr, 60)}`);
  return parts.join('\n');
}
