import { spawn } from 'node:child_process';
import { test } from 'node:test';

/**
 * The extension inside a real VS Code (code-server) against a real local cluster: the in-host
 * suite and the UI flow (test/e2e/run.mjs). Skipped, with the reason, only when code-server cannot
 * be installed outside CI.
 *
 * Its timeout is a backstop above the parts' own bounds, so that a part that hangs fails by its
 * own bound, naming itself: the in-host suite ≤ 600 s (run.mjs), the UI flow ≤ the sum of its
 * steps' budgets (UI_STEPS in ui.mjs, 725 s), the VSIX check ≤ 240 s, and code-server's starts and
 * stops. On a quiet 2-core machine the whole file takes about 4 minutes.
 */
test('the extension in a real VS Code (code-server): in-host tests and UI flow', {
  timeout: 1_650_000,
}, async (t) => {
  const r = await run(process.execPath, ['test/e2e/run.mjs', '--exit-with-parent']);
  if (r.status === 77) {
    t.skip(r.stderr.trim().split('\n').pop());
    return;
  }
  // CI keeps only the failure summary of a long run: the summary itself must say what failed.
  if (r.status !== 0) {
    throw new Error(`test/e2e/run.mjs exited with ${r.status}\n${whatFailed(r.stdout, r.stderr)}`);
  }
});

/**
 * Runs the command, passing its output on as it comes (so that a run cut short still shows how
 * far it got) and keeping it for the failure summary.
 */
function run(
  cmd: string,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // stdin: a pipe that closes if this process is killed (a test timeout), and run.mjs with it.
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      process.stdout.write(d);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

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
  const steps = stdout.match(/^ui: .*$/gm);
  if (steps) parts.push(`UI steps done:\n${steps.join('\n')}`);
  // The error and what the views showed when it failed (ui.mjs puts them under the message).
  const uiFailure = stderr.match(/^Error: UI step [^\n]*(\n[^\n]*){0,200}/m);
  if (uiFailure) parts.push(uiFailure[0].split(/\n\s+at /)[0] ?? uiFailure[0]);
  parts.push(`end of stdout:\n${tail(stdout, 15)}`, `end of stderr:\n${tail(stderr, 40)}`);
  return parts.join('\n');
}
