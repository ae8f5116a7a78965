import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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
  type MasterState,
  RequestStatus,
  StateChanged,
} from '../../backend/agent/protocol.js';

/** `wick agent` over stdio, as the extension's language client starts it, against a real local cluster. */
test('wick agent starts a local cluster, pushes its state, and leaves no process', async () => {
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
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
    localCluster: { workers: 2, cores: 1, memory: '512m' },
  });
  assert.equal(c.kind, 'connected', JSON.stringify(c));
  const alive = await waitFor(
    (p) => (p.state?.workers.filter((w) => w.state === 'ALIVE').length ?? 0) === 2,
  );
  assert.equal(alive.connection.kind, 'connected');
  const status = await conn.sendRequest(RequestStatus, {});
  assert.ok(status.rssBytes > 0);
  const d = await conn.sendRequest(Disconnect, { stopLocalCluster: true });
  assert.equal(d.kind, 'disconnected');
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // As vscode-languageclient stops it: shutdown, then exit.
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  assert.equal(await exited, 0);
  conn.dispose();
});
