/**
 * Issue 19 in the real extension host: examples/wordcount.ts (a textFile, a reduceByKey shuffle
 * and a sortBy) submitted from VS Code runs on the cluster, and its driver output holds the top
 * words with the counts a plain count of the same file gives.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DriverOutputs, DriverRun } from '../../../extension/output/driverOutputs.js';
import { Answering, type Api, step, submit, within } from './helpers.js';

type OutputApi = Api & { outputs: DriverOutputs };

function exited(api: OutputApi, id: string): Promise<DriverRun> {
  return new Promise((resolve) => {
    const run = api.outputs.get(id);
    if (run?.exit) return resolve(run);
    const sub = api.outputs.onDidExit((r) => {
      if (r.id === id) {
        sub.dispose();
        resolve(r);
      }
    });
  });
}

export async function wordCountSteps(base: Api, root: string): Promise<void> {
  const api = base as OutputApi;
  await step('WordCount submitted from VS Code prints the top words of a plain count', async () => {
    // In the workspace (the repository here): the local cluster shows its jobs the workspace's
    // folders, and no other of the user's, /tmp included, when it runs them confined.
    mkdirSync(join(root, 'test-output'), { recursive: true });
    const dir = mkdtempSync(join(root, 'test-output', 'wick-e2e-wordcount-'));
    const info = new Answering(api.host, 'showInformationMessage', () => undefined);
    try {
      // Word i appears 30 − i times (i < 25), spread over lines, so the top 20 are known.
      const words: string[] = [];
      for (let i = 0; i < 25; i++) for (let k = 0; k < 30 - i; k++) words.push(`word${i}`);
      for (let j = words.length - 1; j > 0; j--) {
        const r = (j * 7919) % (j + 1);
        [words[j], words[r]] = [words[r] as string, words[j] as string];
      }
      const lines: string[] = [];
      for (let j = 0; j < words.length; j += 9) lines.push(words.slice(j, j + 9).join(' '));
      const file = join(dir, 'words.txt');
      writeFileSync(file, `${lines.join('\n')}\n`);
      const r = (await submit({
        file: join(root, 'examples', 'wordcount.ts'),
        args: [file, '3'],
        deployMode: 'client',
      })) as Awaited<ReturnType<typeof submit>> & { outputId?: string };
      assert.ok(r.success && r.outputId, JSON.stringify(r));
      const run = await within(90_000, exited(api, r.outputId as string), 'the driver ending');
      assert.equal(run.exit?.code, 0, run.text.slice(-2000));
      const printed = [...run.text.matchAll(/^(word\d+): (\d+)$/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]);
      assert.deepEqual(
        printed,
        Array.from({ length: 20 }, (_, i) => [`word${i}`, 30 - i]),
        run.text.slice(-2000),
      );
    } finally {
      info.restore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
