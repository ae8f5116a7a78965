import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import {
  Connect,
  type Connection,
  Disconnect,
  DriverExited,
  DriverOutput,
  type MasterState,
  RequestStatus,
  StateChanged,
  SubmitApplication,
} from '../../backend/agent/protocol.js';
import { killMarked, markedProcesses, waitUntilGone } from '../helpers/cli.js';

/** `wick agent` over stdio, as the extension's language client starts it, against a real local cluster. */
test('wick agent starts a local cluster, pushes its state, and leaves no process', {
  timeout: 60_000,
}, async (t) => {
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    // Drivers then log the app id they registered, which the test compares with the answers.
    env: { ...process.env, WICK_LOG_LEVEL: 'INFO' },
  });
  // Should an assertion fail first: its cluster and drivers end with it (--exit-with-parent).
  t.after(() => child.kill('SIGKILL'));
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const pushes: { connection: Connection; state?: MasterState }[] = [];
  let onPush: () => void = () => {};
  conn.onNotification(StateChanged, (p) => {
    pushes.push(p);
    onPush();
  });
  conn.listen();
  const waitFor = (pred: (p: (typeof pushes)[number]) => boolean) =>
    new Promise<(typeof pushes)[number]>((resolve) => {
      const check = () => {
        const hit = pushes.find(pred);
        if (hit) resolve(hit);
      };
      onPush = check;
      check();
    });
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  const c = await conn.sendRequest(Connect, {
    master: 'local',
    localCluster: { workers: 2, cores: 1, memory: '1536m' },
  });
  assert.equal(c.kind, 'connected', JSON.stringify(c));
  const alive = await waitFor(
    (p) => (p.state?.workers.filter((w) => w.state === 'ALIVE').length ?? 0) === 2,
  );
  assert.equal(alive.connection.kind, 'connected');
  const status = await conn.sendRequest(RequestStatus, {});
  assert.ok(status.rssBytes > 0);
  // Each submit's driver output comes as notifications under the id the submit gave, then its end.
  const outputs = new Map<string, { text: string; exit?: number | null; reason?: string }>();
  let onOutput: () => void = () => {};
  conn.onNotification(DriverOutput, (p) => {
    assert.ok(p.data.length <= 16 * 1024, `a chunk of ${p.data.length} characters`);
    const o = outputs.get(p.outputId) ?? { text: '' };
    o.text += p.data;
    outputs.set(p.outputId, o);
    onOutput();
  });
  conn.onNotification(DriverExited, (p) => {
    const o = outputs.get(p.outputId) ?? { text: '' };
    o.exit = p.exitCode;
    o.reason = p.reason;
    outputs.set(p.outputId, o);
    onOutput();
  });
  const exitedOutput = (id: string) =>
    new Promise<{ text: string; exit?: number | null; reason?: string }>((resolve) => {
      const check = () => {
        const o = outputs.get(id);
        if (o?.reason !== undefined) resolve(o);
      };
      const prev = onOutput;
      onOutput = () => {
        prev();
        check();
      };
      check();
    });
  const submitted = await conn.sendRequest(SubmitApplication, {
    file: join(process.cwd(), 'examples', 'pi.ts'),
    args: ['4'],
    deployMode: 'client',
    // The workers above offer 1536m each; the default is 1g per executor.
    executorMemory: '256m',
    outputId: 'client-1',
  });
  assert.ok(submitted.success && submitted.appId, JSON.stringify(submitted));
  assert.doesNotMatch(submitted.message, /\/tmp|driver output:/, 'the answer names no file');
  const first = await exitedOutput('client-1');
  assert.match(first.text, /Pi is roughly 3\./, first.text);
  assert.equal(first.exit, 0, first.text);
  assert.equal(first.reason, 'the driver exited with status 0');
  // Two submits of the same file at once: each answer names the app its own driver registered,
  // and each output is its own driver's.
  const twice = await Promise.all(
    [1, 2].map((i) =>
      conn.sendRequest(SubmitApplication, {
        file: join(process.cwd(), 'examples', 'pi.ts'),
        args: ['2'],
        deployMode: 'client',
        executorMemory: '256m',
        outputId: `twice-${i}`,
      }),
    ),
  );
  for (const [i, r] of twice.entries()) {
    assert.ok(r.success && r.appId, JSON.stringify(r));
    const o = await exitedOutput(`twice-${i + 1}`);
    assert.match(o.text, /Pi is roughly 3\./, o.text);
    assert.match(o.text, new RegExp(`app ID ${r.appId}\\b`), o.text);
  }
  assert.notEqual(twice[0]?.appId, twice[1]?.appId);
  // Cluster mode: the driver's logs on its worker, followed from their start.
  const onCluster = await conn.sendRequest(SubmitApplication, {
    file: join(process.cwd(), 'examples', 'pi.ts'),
    args: ['2'],
    deployMode: 'cluster',
    executorMemory: '256m',
    outputId: 'cluster-1',
  });
  assert.ok(onCluster.success && onCluster.driverId, JSON.stringify(onCluster));
  const clustered = await exitedOutput('cluster-1');
  assert.match(clustered.text, /Pi is roughly 3\./, clustered.text);
  assert.equal(clustered.exit, null);
  assert.match(clustered.reason ?? '', new RegExp(`driver ${onCluster.driverId} ended FINISHED`));
  // A bad output id is refused, naming it.
  await assert.rejects(
    conn.sendRequest(SubmitApplication, {
      file: join(process.cwd(), 'examples', 'pi.ts'),
      args: [],
      deployMode: 'client',
      outputId: '../x',
    }),
    /outputId "..\/x" is not valid/,
  );
  const d = await conn.sendRequest(Disconnect, { stopLocalCluster: true });
  assert.equal(d.kind, 'disconnected');
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // As vscode-languageclient stops it: shutdown, then exit.
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  assert.equal(await exited, 0);
  conn.dispose();
});

test('a SIGKILLed agent leaves no process: its local cluster and its client-mode driver end too', {
  timeout: 90_000,
}, async () => {
  const mark = `agent-kill-${process.pid}-${Date.now()}`;
  // A temp folder of its own: an agent that other test files start meanwhile clears what dead
  // agents left in theirs, and took this one's before it could be looked at (ci-c).
  const tmp = mkdtempSync(join(tmpdir(), 'wick-test-agent-tmp-'));
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, WICK_TEST_MARK: mark, TMPDIR: tmp },
  });
  try {
    const conn = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    conn.listen();
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
    });
    const c = await conn.sendRequest(Connect, {
      master: 'local',
      localCluster: { workers: 2, cores: 1, memory: '512m' },
    });
    assert.equal(c.kind, 'connected', JSON.stringify(c));
    const submitted = await conn.sendRequest(SubmitApplication, {
      file: join(process.cwd(), 'test', 'fixtures', 'apps', 'until-killed.ts'),
      args: [],
      deployMode: 'client',
      executorMemory: '256m',
    });
    assert.ok(submitted.success, JSON.stringify(submitted));
    const driver = markedProcesses(mark).find((p) => / submit .*until-killed\.ts/.test(p.cmdline));
    assert.ok(driver, JSON.stringify(markedProcesses(mark)));
    child.kill('SIGKILL');
    conn.dispose();
    const left = await waitUntilGone(
      markedProcesses(mark).map((p) => p.pid),
      30_000,
    );
    assert.deepEqual(left, [], JSON.stringify(markedProcesses(mark)));
    // What it could not remove (its cluster's work dir; drivers' output is not written to disk)
    // goes when the next agent starts.
    const leftDirs = () =>
      readdirSync(tmp).filter((n) => new RegExp(`^wick-(vscode|agent)-${child.pid}-`).test(n));
    assert.equal(leftDirs().length, 1, `left by the killed agent: ${leftDirs()}`);
    await withAgent({ TMPDIR: tmp }, async () => {
      for (let i = 0; leftDirs().length > 0; i++) {
        if (i > 500) assert.fail(`still there: ${leftDirs()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
  } finally {
    child.kill('SIGKILL');
    await killMarked(mark);
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('an exit that comes before shutdown has finished (the language server library then ends the process at once) leaves no process and no work dir', {
  timeout: 60_000,
}, async (t) => {
  const mark = `agent-exit-${process.pid}-${Date.now()}`;
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, WICK_TEST_MARK: mark },
  });
  t.after(async () => {
    child.kill('SIGKILL');
    await killMarked(mark);
  });
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  conn.listen();
  t.after(() => conn.dispose());
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  const c = await conn.sendRequest(Connect, {
    master: 'local',
    localCluster: { workers: 1, cores: 1, memory: '512m' },
  });
  assert.equal(c.kind, 'connected', JSON.stringify(c));
  const workDirs = () =>
    readdirSync(tmpdir()).filter((n) => n.startsWith(`wick-vscode-${child.pid}-`));
  assert.equal(workDirs().length, 1, 'the local cluster works in a folder of its own');
  const daemons = markedProcesses(mark).map((p) => p.pid);
  assert.ok(daemons.length >= 3, `the agent, a master and a worker: ${JSON.stringify(daemons)}`);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // A client that does not wait for the answer to shutdown (VS Code closing) sends exit at once.
  void conn.sendRequest('shutdown').catch(() => {});
  await conn.sendNotification('exit');
  assert.equal(await exited, 0);
  assert.deepEqual(workDirs(), [], 'the local cluster’s work dir is removed');
  assert.deepEqual(await waitUntilGone(daemons, 10_000), [], 'no process is left');
});

/** Runs `fn` while a `wick agent` runs (initialized), then stops it as the client does. */
async function withAgent(env: NodeJS.ProcessEnv, fn: () => Promise<void>): Promise<void> {
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  conn.listen();
  try {
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
    });
    await fn();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    assert.equal(await exited, 0);
  } finally {
    conn.dispose();
    child.kill('SIGKILL');
  }
}
