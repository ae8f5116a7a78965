/**
 * A window's local cluster shows its workspace folders to its applications, read-only, and
 * nothing else of the user's: `wick agent` over stdio (as the extension starts it) with the
 * executors confined (wick.executor.sandbox=bwrap) runs examples/wordcount.ts on a file in the
 * workspace folder it was given, and the same job on a file outside it fails naming the file.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { localClusterConf, MAX_READ_ONLY_PATHS } from '../../backend/agent/localClusterConf.js';
import {
  Connect,
  DriverExited,
  DriverOutput,
  SubmitApplication,
} from '../../backend/agent/protocol.js';

test('the workspace folders become the sandbox setting; a path it cannot carry is named', () => {
  assert.deepEqual(localClusterConf(undefined), { conf: [], skipped: [] });
  assert.deepEqual(localClusterConf(['/home/alice/project', '/srv/data']), {
    conf: ['wick.executor.sandbox.readOnlyPaths=/home/alice/project,/srv/data'],
    skipped: [],
  });
  const odd = localClusterConf(['relative/dir', '/a,b', `/${'x'.repeat(5000)}`, '/ok']);
  assert.deepEqual(odd.conf, ['wick.executor.sandbox.readOnlyPaths=/ok']);
  assert.match(odd.skipped[0] ?? '', /^"relative\/dir": not an absolute path$/);
  assert.match(odd.skipped[1] ?? '', /^"\/a,b": a comma in it/);
  assert.match(odd.skipped[2] ?? '', /: longer than 4096 characters$/);
  const many = localClusterConf(Array.from({ length: 40 }, (_, i) => `/p${i}`));
  assert.equal(many.conf[0]?.split(',').length, MAX_READ_ONLY_PATHS);
  assert.deepEqual(many.skipped, [`8 folders past the first ${MAX_READ_ONLY_PATHS}`]);
  const notList = localClusterConf('/etc' as unknown as string[]);
  assert.deepEqual(notList, { conf: [], skipped: ['"/etc": not a list of folders'] });
});

test("a confined local cluster's job reads the workspace's files, and no other", {
  timeout: 120_000,
}, async (t) => {
  const workspace = mkdtempSync(join(tmpdir(), 'wick-test-workspace-'));
  const elsewhere = mkdtempSync(join(tmpdir(), 'wick-test-elsewhere-'));
  t.after(() => {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });
  const text = 'to be or not to be\nthat is the question\nto be\n';
  writeFileSync(join(workspace, 'words.txt'), text);
  writeFileSync(join(elsewhere, 'words.txt'), text);

  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, WICK_EXECUTOR_SANDBOX: 'bwrap' },
  });
  t.after(() => child.kill('SIGKILL'));
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const outputs = new Map<string, string>();
  const exits = new Map<string, (code: number | null) => void>();
  conn.onNotification(DriverOutput, (p) => {
    outputs.set(p.outputId, (outputs.get(p.outputId) ?? '') + p.data);
  });
  conn.onNotification(DriverExited, (p) => exits.get(p.outputId)?.(p.exitCode));
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  const c = await conn.sendRequest(Connect, {
    master: 'local',
    localCluster: { workers: 1, cores: 1, memory: '1g', readOnlyPaths: [workspace] },
  });
  assert.equal(c.kind, 'connected', JSON.stringify(c));

  const run = async (file: string, outputId: string) => {
    const exited = new Promise<number | null>((resolve) => exits.set(outputId, resolve));
    const r = await conn.sendRequest(SubmitApplication, {
      file: join(process.cwd(), 'examples', 'wordcount.ts'),
      args: [file, '1'],
      deployMode: 'client',
      executorMemory: '256m',
      outputId,
    });
    assert.ok(r.success, JSON.stringify(r));
    return { code: await exited, text: outputs.get(outputId) ?? '' };
  };

  const inside = await run(join(workspace, 'words.txt'), 'inside');
  assert.equal(inside.code, 0, inside.text);
  assert.match(inside.text, /^to: 3$/m, inside.text);
  assert.match(inside.text, /^be: 3$/m, inside.text);

  const outside = await run(join(elsewhere, 'words.txt'), 'outside');
  assert.notEqual(outside.code, 0, outside.text);
  assert.match(outside.text, new RegExp(`${join(elsewhere, 'words.txt')}`), outside.text);
  conn.dispose();
});
