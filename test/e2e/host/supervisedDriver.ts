/**
 * A supervised cluster-mode driver that fails twice and then succeeds: its stdout document, opened
 * while the first run is going, follows every relaunch and says how the driver finally ended.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { Node } from '../../../extension/tree/model.js';
import {
  type Api,
  drivers,
  endedAfter,
  endedNote,
  step,
  submit,
  textUntil,
  until,
  within,
  workFile,
} from './helpers.js';

const RUNS = 3;

export async function supervisedDriverSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  await step("a supervised driver's stdout follows its relaunches to its end", async () => {
    const before = new Set(drivers(s.state).map((d) => d.id));
    // The submit resolves when the driver ends (it registers no application); the log is opened
    // as soon as the driver runs, to follow it through its relaunches.
    const submitted = submit({
      file: join(root, 'test', 'fixtures', 'supervisedDriver.ts'),
      args: [String(RUNS)],
      deployMode: 'cluster',
      supervise: true,
    });
    const driver = await within(
      60_000,
      until(s, (m) =>
        drivers(m.state).find((d) => !before.has(d.id) && d.state === 'RUNNING' && d.workerId),
      ),
      () =>
        `the new driver RUNNING on a worker: ${JSON.stringify(drivers(s.state).filter((d) => !before.has(d.id)))}`,
    );
    const node: Node = { kind: 'driver', driver, under: 'drivers' };
    const editor = (await vscode.commands.executeCommand(
      'wick.showStdout',
      node,
    )) as vscode.TextEditor;
    const doc = editor.document;
    const opened = doc.getText();
    const stderr = await workFile(s, driver.id, 'stderr');
    const text = await within(
      60_000,
      textUntil(doc, endedNote),
      () =>
        `the log saying the driver ended: ${JSON.stringify(drivers(s.state).find((d) => d.id === driver.id))}; the log: ${JSON.stringify(doc.getText())} (${api.logs.describe(doc.uri)}); its stderr: ${readFileSync(stderr, 'utf8').slice(-600)}; dir: ${readdirSync(dirname(stderr))}; stdout on disk: ${readFileSync(join(dirname(stderr), 'stdout'), 'utf8')}`,
    );
    const r = await within(30_000, submitted, 'the submit');
    assert.ok(r?.success && r.driverId === driver.id, JSON.stringify(r));
    assert.ok(
      !opened.includes(`supervised run ${RUNS} of`),
      `opened before the last run: ${JSON.stringify(opened)}`,
    );
    const runs = [...text.matchAll(/^supervised run (\d+) of \d+$/gm)].map((m) => Number(m[1]));
    assert.deepEqual(runs, [1, 2, 3]);
    const disk = readFileSync(await workFile(s, driver.id, 'stdout'), 'utf8');
    const ended = endedAfter(text, disk);
    assert.match(ended, /FINISHED/);
    assert.match(ended, new RegExp(`${RUNS} runs`));
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
}
