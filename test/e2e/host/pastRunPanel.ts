/**
 * A past run in the dashboard panel and in Debug Failed Task (issue 27, items 4 and 8): a job
 * whose task fails runs before the agent is killed (and its local cluster with it, as a window
 * reload ends them); the next agent lists it under Completed. Its row offers Open in Dashboard
 * and Debug Failed Task; the panel opens its application page, read from its event log, and its
 * job page shows what the log says of the job (the same figures the agent reads from the log);
 * with the local cluster stopped, no master at all, its stage page still opens with the failing
 * task's error. Debug Failed Task on the row stops on the throwing line in the failing partition,
 * found in the log (the master that ran it is gone).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  type LoggedFailedTask,
  type PastRun,
  RequestAppStatusApiOf,
  RequestPastRunFailedTask,
} from '../../../backend/agent/protocol.js';
import type { DashboardPanel } from '../../../extension/dashboard/dashboardPanel.js';
import { children, item, type Node, roots } from '../../../extension/tree/model.js';
import { drive } from './dashboard.js';
import { debuggeeOutput, lineOf, stopsAtFailingElement } from './debugTasks.js';
import { type Api, apps, step, submit, until, within } from './helpers.js';

const FAIL_TASK = ['test', 'fixtures', 'apps', 'failTask.ts'];

/** Before the agent is killed: a run whose job failed because of a task (set up). */
export async function failingRunBeforeClusterEnds(
  api: Api,
  root: string,
): Promise<string | undefined> {
  let id: string | undefined;
  await step('a failing run ends before the local cluster does (past run set up)', async () => {
    const r = await submit({ file: join(root, ...FAIL_TASK), deployMode: 'client' });
    assert.ok(r.appId, JSON.stringify(r));
    const appId = r.appId as string;
    await within(
      120_000,
      until(api.session, (m) =>
        apps(m.state).find((a) => a.id === appId)?.state === 'FAILED' ? true : undefined,
      ),
      `${appId} FAILED`,
    );
    id = appId;
  });
  return id;
}

/** Whether a row of this contextValue offers `command` (package.json's view/item/context). */
function offered(command: string, contextValue: string): boolean {
  const ext = vscode.extensions.getExtension('wick.wick');
  const menus = ext?.packageJSON.contributes.menus['view/item/context'] as {
    command: string;
    when: string;
  }[];
  return menus.some((m) => {
    if (m.command !== command) return false;
    const re = /viewItem =~ \/(.+)\/$/.exec(m.when);
    if (re) return new RegExp(re[1] as string).test(contextValue);
    return /viewItem == (\S+)$/.exec(m.when)?.[1] === contextValue;
  });
}

/** Resolves once the panel says it shows `hash`. */
function shows(panel: DashboardPanel, hash: string): Promise<string> {
  return within(
    30_000,
    new Promise<string>((resolve) => {
      if (panel.route === hash) return resolve(hash);
      const sub = panel.onDidExchange(() => {
        if (panel.route === hash) {
          sub.dispose();
          resolve(hash);
        }
      });
    }),
    () => `the panel on ${hash} (it says ${panel.route})`,
  );
}

/** The past run's row under Completed, once the past runs list it. */
async function pastRow(api: Api, id: string): Promise<Extract<Node, { kind: 'run' }>> {
  const s = api.session;
  await within(
    60_000,
    new Promise<PastRun[]>((resolve) => {
      const has = (r: PastRun[]) => r.some((x) => x.appId === id);
      if (has(s.pastRuns)) return resolve(s.pastRuns);
      const sub = s.onDidChangePastRuns((r) => {
        if (has(r)) {
          sub.dispose();
          resolve(r);
        }
      });
    }),
    () => `the past runs to list ${id} (they list ${s.pastRuns.map((r) => r.appId)})`,
  );
  await s.settled();
  const m = s.model();
  const completed = roots('applications', m).find(
    (n) => n.kind === 'group' && n.group === 'completed',
  ) as Node;
  const row = children(completed, m).find((n) => n.kind === 'run' && n.run.appId === id);
  assert.ok(row, `a row for ${id} under Completed`);
  return row as Extract<Node, { kind: 'run' }>;
}

export async function pastRunPanelSteps(
  api: Api,
  root: string,
  id: string | undefined,
): Promise<void> {
  const s = api.session;
  let row: Extract<Node, { kind: 'run' }> | undefined;

  await step(
    'a past run opens in the panel from its row: its application, job and stage pages from its event log, with no master too',
    async () => {
      assert.ok(id, 'the set-up step ran a failing job');
      row = await pastRow(api, id);
      const contextValue = item(row, s.model()).contextValue as string;
      assert.equal(contextValue, 'wick.run.failed');
      assert.ok(offered('wick.openInDashboard', contextValue), 'Open in Dashboard on its row');
      assert.ok(offered('wick.debugFailedTask', contextValue), 'Debug Failed Task on its row');
      // No master of this window has it: the master that ran it is gone.
      assert.equal(
        apps(s.state).some((a) => a.id === id),
        false,
      );
      const panel = (await within(
        15_000,
        vscode.commands.executeCommand('wick.openInDashboard', row),
        'Open in Dashboard on the past run',
      )) as DashboardPanel;
      assert.ok(panel, 'Open in Dashboard returned the panel');
      const app = `#/app/${id}`;
      await shows(panel, app);
      await drive({ action: 'wait', selector: 'text=read from its event log' });
      // The log's end: the driver's failure, as its ApplicationEnd says.
      await drive({ action: 'wait', selector: 'text=bad record 50' });
      await drive({ action: 'shot', name: 'past-run-1-app' });

      // Its job page: what the log says of the job, as the agent reads it from the log.
      // By the method's name: this bundle's RequestType is not the extension's vscode-jsonrpc's.
      const asked = (await api.client.sendRequest(RequestAppStatusApiOf.method, {
        path: `/applications/${id}/jobs/0`,
      })) as { status: number; body: string };
      assert.equal(asked.status, 200, asked.body);
      const job = JSON.parse(asked.body) as {
        status: string;
        stageIds: number[];
        numCompletedStages: number;
        numActiveStages: number;
        numFailedStages: number;
        numSkippedStages: number;
      };
      assert.equal(job.status, 'FAILED');
      assert.equal(job.numFailedStages, 1);
      await drive({ action: 'click', selector: `a[href="${app}/job/0"]` });
      await shows(panel, `${app}/job/0`);
      await drive({ action: 'wait', selector: 'h1:has-text("Job 0 of Fail Task")' });
      await drive({
        action: 'wait',
        selector: `text=${job.numCompletedStages} done, ${job.numActiveStages} running, ${job.numFailedStages} failed, ${job.numSkippedStages} skipped of ${job.stageIds.length}`,
      });
      const { count: pending } = await drive({ action: 'count', selector: 'text=No jobs to show' });
      assert.equal(pending, 0);
      await drive({ action: 'shot', name: 'past-run-2-job' });

      // No master at all: the pages are the agent's, from the log.
      await within(
        30_000,
        vscode.commands.executeCommand('wick.stopLocalCluster'),
        'stopping the local cluster',
      );
      await within(
        30_000,
        until(s, (m) => (m.connection.kind === 'disconnected' ? true : undefined)),
        'disconnected',
      );
      const [stageId] = job.stageIds;
      await drive({ action: 'click', selector: `a[href="${app}/stage/${stageId}/0"]` });
      await shows(panel, `${app}/stage/${stageId}/0`);
      await drive({ action: 'wait', selector: 'text=Failed Tasks' });
      await drive({ action: 'wait', selector: 'td >> text=bad record 50' });
      await drive({ action: 'shot', name: 'past-run-3-stage-no-master' });
      panel.dispose();
    },
  );

  await step(
    'Debug Failed Task on a past run stops on the throwing line in the failing partition, found in its event log',
    async () => {
      assert.ok(id && row, 'the past run was found');
      const file = join(root, ...FAIL_TASK);
      const line = lineOf(file, 'THROWS HERE');
      // What the command reads: the log's failed task (its master is gone).
      const { task, reason } = (await api.client.sendRequest(RequestPastRunFailedTask.method, {
        appId: id,
      })) as { task?: LoggedFailedTask; reason?: string };
      assert.ok(task, reason);
      assert.equal(task.partitionId, 2);
      assert.ok(task.error.includes(`${file}:${line}:`), task.error);
      await vscode.extensions.getExtension('ms-vscode.js-debug')?.activate();
      const out = debuggeeOutput();
      const run = row;
      try {
        await stopsAtFailingElement(
          file,
          line,
          // As the row's context menu runs it.
          () => vscode.commands.executeCommand('wick.debugFailedTask', run),
          out.text,
        );
      } finally {
        out.dispose();
      }
    },
  );
}
