import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import {
  Connect,
  FollowLog,
  LogChunk,
  LogFollowEnded,
  type MasterState,
  RequestLogRange,
  StateChanged,
  SubmitApplication,
} from '../../backend/agent/protocol.js';

/**
 * `wick agent` over stdio against a real local cluster: the stdout of a supervised cluster-mode
 * driver, followed from its first run, gets every run's bytes in order and ends once the driver
 * has finished, saying how.
 */
test("a followed supervised driver's stdout spans its relaunches and says how it ended", async (t) => {
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  t.after(async () => {
    const exited = new Promise((r) => child.once('exit', r));
    await conn.sendRequest('shutdown').catch(() => undefined);
    await conn.sendNotification('exit').catch(() => undefined);
    await exited;
    conn.dispose();
  });
  let state: MasterState | undefined;
  let onPush = () => {};
  conn.onNotification(StateChanged, (p) => {
    state = p.state;
    onPush();
  });
  const chunks: { offset: number; data: Buffer }[] = [];
  let ended: { totalSize: number; reason: string } | undefined;
  let onLog = () => {};
  conn.onNotification(LogChunk, (c) => {
    chunks.push({ offset: c.offset, data: Buffer.from(c.data, 'base64') });
    onLog();
  });
  conn.onNotification(LogFollowEnded, (e) => {
    ended = e;
    onLog();
  });
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  const c = await conn.sendRequest(Connect, {
    master: 'local',
    localCluster: { workers: 1, cores: 1, memory: '1g' },
  });
  assert.equal(c.kind, 'connected', JSON.stringify(c));

  const submitted = conn.sendRequest(SubmitApplication, {
    file: resolve('test/fixtures/supervisedDriver.ts'),
    args: ['3'],
    deployMode: 'cluster',
    supervise: true,
  });
  const driver = await new Promise<string>((done) => {
    onPush = () => {
      const d = state?.activeDrivers.find((x) => x.state === 'RUNNING' && x.workerId);
      if (d) done(d.id);
    };
    onPush();
  });
  const source = { driverId: driver };
  const first = await conn.sendRequest(RequestLogRange, { source, stream: 'stdout', length: 1e6 });
  await conn.sendRequest(FollowLog, {
    followId: 'f1',
    source,
    stream: 'stdout',
    offset: first.offset + Buffer.from(first.data, 'base64').length,
  });
  await new Promise<void>((done) => {
    onLog = () => ended && done();
    onLog();
  });
  const r = await submitted;
  assert.ok(r.success && r.driverId === driver, JSON.stringify(r));
  let next = first.offset + Buffer.from(first.data, 'base64').length;
  for (const ch of chunks) {
    assert.equal(ch.offset, next, 'each chunk starts where the last ended');
    next += ch.data.length;
  }
  const text = Buffer.concat([
    Buffer.from(first.data, 'base64'),
    ...chunks.map((x) => x.data),
  ]).toString();
  assert.equal(text, 'supervised run 1 of 3\nsupervised run 2 of 3\nsupervised run 3 of 3\n');
  assert.equal(ended?.reason, 'process exited: driver FINISHED with exit code 0 after 3 runs');
});
