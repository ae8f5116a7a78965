/**
 * Watching a job from the editor, and finding runs again (issue 27, item 8): the submit's one
 * notification goes on into the job's stage and task counts, and its Cancel kills the app; the
 * tree shows a running app's jobs and stages; after the agent's local cluster ends under a
 * running app (the agent killed: what a window reload does to it), the next cluster's
 * Applications view still lists the earlier runs, the running one KILLED with why, with their
 * driver output and executors' logs from disk. The window reload itself is the UI flow's
 * (test/e2e/ui.mjs, step 12).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { PastRun } from '../../../backend/agent/protocol.js';
import { children, findApp, item, type Node, roots } from '../../../extension/tree/model.js';
import { type Answering, type Api, apps, step, submit, until, within } from './helpers.js';
import { RecordingProgress } from './progress.js';

const JOB_MESSAGE = /^Job \d+ · Stage \d+: \d+ \+ \d+ \/ 100000 tasks/;

export async function watchJobSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  const pi = join(root, 'examples', 'pi.ts');

  await step(
    "a submit's notification follows its job's stage and task counts; the tree shows its jobs and stages; Cancel kills it",
    async () => {
      const progress = new RecordingProgress(api.host);
      try {
        const r = await submit({ file: pi, args: ['100000'], deployMode: 'client' });
        assert.ok(r.success && r.appId, JSON.stringify(r));
        const id = r.appId as string;
        const shown = progress.shown.find((p) => p.title === 'Running pi.ts on Wick');
        assert.ok(shown, `no "Running pi.ts on Wick" progress: ${JSON.stringify(progress.shown)}`);
        // The same notification, past the submit's answer: the job's counts.
        const said = await within(
          120_000,
          shown.message((m) => JOB_MESSAGE.test(m)),
          () => `a job's counts in the notification (said: ${shown.messages.join(' | ')})`,
        );
        assert.ok(shown.messages.indexOf('Bundling pi.ts…') < shown.messages.indexOf(said));
        // The tree: the app's running job, and under it its running stage with its counts.
        const job = await within(
          60_000,
          until(
            s,
            (m) => {
              const found = findApp(id, m);
              return found
                ? children(found.node, m).find((n) => n.kind === 'job' && n.stages.length > 0)
                : undefined;
            },
            'render',
          ),
          'a running job with a running stage in the tree',
        );
        const m = s.model();
        assert.match(item(job, m).label, /^Job \d+$/);
        assert.match(item(job, m).description ?? '', /^\d+% · \d+\/100000 tasks/);
        const [stage] = children(job, m);
        assert.equal(stage?.kind, 'stage');
        assert.match(item(stage as Node, m).label, /^Stage \d+: /);
        assert.match(item(stage as Node, m).description ?? '', /\d+\/100000 tasks/);
        // Cancel, as its button: the app is killed, and the notification ends.
        shown.cancel();
        await within(
          60_000,
          until(s, (m) =>
            apps(m.state).find((a) => a.id === id)?.state === 'KILLED' ? true : undefined,
          ),
          `${id} KILLED after Cancel`,
        );
        await within(30_000, shown.ended, 'the notification ending');
      } finally {
        progress.restore();
      }
    },
  );
}

/** Before the agent is killed: a run that is running when its cluster ends. */
export async function runningWhenClusterEnds(api: Api, root: string): Promise<string | undefined> {
  let id: string | undefined;
  await step('a run is running when the local cluster ends (set up)', async () => {
    const r = await submit({
      file: join(root, 'examples', 'pi.ts'),
      args: ['100000'],
      deployMode: 'client',
    });
    assert.ok(r.success && r.appId, JSON.stringify(r));
    id = r.appId as string;
    await within(
      60_000,
      until(api.session, (m) =>
        apps(m.state).find((a) => a.id === id)?.state === 'RUNNING' ? true : undefined,
      ),
      `${id} RUNNING`,
    );
  });
  return id;
}

/** After the agent restarted with a new local cluster: the earlier runs are still listed. */
export async function runsKeptSteps(
  api: Api,
  ended: string | undefined,
  notice: Answering,
): Promise<void> {
  const s = api.session;
  await step(
    "the earlier cluster's runs are listed after its end: the running one KILLED with why, output and logs from disk",
    async () => {
      assert.ok(ended, 'the set-up step submitted a run');
      const runs = await within(
        60_000,
        new Promise<PastRun[]>((resolve) => {
          const has = (r: PastRun[]) => r.some((x) => x.appId === ended);
          if (has(s.pastRuns)) return resolve(s.pastRuns);
          const sub = s.onDidChangePastRuns((r) => {
            if (has(r)) {
              sub.dispose();
              resolve(r);
            }
          });
        }),
        () => `the past runs to list ${ended} (they list ${s.pastRuns.map((r) => r.appId)})`,
      );
      const run = runs.find((r) => r.appId === ended) as PastRun;
      assert.equal(run.state, 'KILLED');
      assert.match(run.message ?? '', /local cluster ended while it ran/);
      // Said to the user, naming it, once.
      const told = await within(
        10_000,
        notice.next((n) => n.message.includes(ended)),
        'the notice of runs ended',
      );
      assert.match(told.message, /ended by its local cluster's end/);
      // The tree: under Completed, after the new cluster's own.
      await s.settled();
      const m = s.model();
      const completed = roots('applications', m).find(
        (n) => n.kind === 'group' && n.group === 'completed',
      ) as Node;
      const rows = children(completed, m);
      const row = rows.find((n) => n.kind === 'run' && n.run.appId === ended) as Node;
      assert.ok(row, `a row for ${ended} under Completed`);
      assert.match(item(row, m).description ?? '', /^KILLED: its local cluster ended while it ran/);
      const under = children(row, m).map((n) => item(n, m, item(row, m).id));
      const output = under.find((i) => i.label === 'driver output');
      assert.ok(output, `a driver output row among ${under.map((i) => i.label)}`);
      const logs = under.filter((i) => /^executor \d+ · (stdout|stderr)$/.test(i.label));
      assert.ok(logs.length > 0, `executors' log rows among ${under.map((i) => i.label)}`);
      // A finished run of the earlier cluster: its answer in its kept driver output.
      const finished = runs.find((r) => r.state === 'FINISHED' && r.output?.exists);
      assert.ok(finished?.output, `a FINISHED run with its output among ${JSON.stringify(runs)}`);
      assert.match(readFileSync(finished.output.path, 'utf8'), /Pi is roughly 3\./);
      assert.ok(finished.jobs && finished.jobs.succeeded >= 1, JSON.stringify(finished.jobs));
      for (const f of finished.logs.files) assert.ok(existsSync(f.path), f.path);
      // Its output opens from its row.
      const fileRow = children(
        rows.find((n) => n.kind === 'run' && n.run.appId === finished.appId) as Node,
        m,
      ).find((n) => n.kind === 'file' && n.label === 'driver output');
      const editor = (await vscode.commands.executeCommand(
        'wick.openRunFile',
        fileRow,
      )) as vscode.TextEditor;
      assert.match(editor.document.getText(), /Pi is roughly 3\./);
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    },
  );
}
