/**
 * The VS Code side of the dashboard's data source, with a fake webview API: what the panel posts
 * (messages of webview/protocol.ts, checked against their schema as the extension will) and how
 * it routes the extension's answers, pushes and log chunks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { VsCodeDataSource } from '../../webview/data/VsCodeDataSource.js';
import { type ExtensionToPanel, PanelToExtension } from '../../webview/protocol.js';
import { masterState } from './fixtures/states.js';

function fakePanel() {
  const posted: PanelToExtension[] = [];
  let listener: ((e: MessageEvent) => void) | undefined;
  const source = new VsCodeDataSource(
    { postMessage: (m) => posted.push(m), getState: () => undefined, setState: () => {} },
    {
      addEventListener: (_type, fn) => {
        listener = fn;
      },
      removeEventListener: () => {
        listener = undefined;
      },
    },
  );
  const deliver = (m: ExtensionToPanel) => listener?.({ data: m } as MessageEvent);
  return { source, posted, deliver };
}

test('the panel asks for a snapshot, then applies what the extension pushes', () => {
  const { source, posted, deliver } = fakePanel();
  const seen: string[] = [];
  source.subscribe({
    snapshot: (s) => seen.push(`snapshot ${s.state.seq}`),
    change: (e) => seen.push(`change ${e.seq}`),
    connection: (up, why) => seen.push(`connection ${up} ${why ?? ''}`.trim()),
  });
  assert.deepEqual(posted, [{ type: 'ready' }]);
  deliver({
    type: 'snapshot',
    snapshot: {
      state: masterState(),
      utilization: [],
      capabilities: { killEnabled: true },
    },
  });
  deliver({ type: 'stateChanged', event: { type: 'MasterStateEvent', seq: 4 } });
  deliver({ type: 'connection', connected: false, message: 'agent restarting' });
  assert.deepEqual(seen, ['snapshot 3', 'change 4', 'connection false agent restarting']);
});

test('requests get their own answers, by id, and every message posted is valid', async () => {
  const { source, posted, deliver } = fakePanel();
  const range = source.readLog(
    { appId: 'app-1', executorId: 0, logType: 'stderr' },
    undefined,
    1024,
  );
  const kill = source.kill({ kind: 'driver', id: 'driver-1' });
  const worker = source.workerState('worker-1');
  const [r, k, w] = posted as [
    Extract<PanelToExtension, { type: 'requestLogRange' }>,
    Extract<PanelToExtension, { type: 'kill' }>,
    Extract<PanelToExtension, { type: 'requestWorkerState' }>,
  ];
  for (const m of posted) assert.ok(Value.Check(PanelToExtension, m), JSON.stringify(m));
  // Answered out of order.
  deliver({ type: 'workerState', requestId: w.requestId, error: 'the worker is DEAD' });
  deliver({
    type: 'killResult',
    requestId: k.requestId,
    result: { success: true, message: 'Kill request for driver-1 submitted' },
  });
  deliver({
    type: 'logRange',
    requestId: r.requestId,
    range: { offset: 0, length: 2, totalSize: 2, data: 'aGk=' },
  });
  assert.deepEqual(await range, { offset: 0, length: 2, totalSize: 2, data: 'aGk=' });
  assert.deepEqual(await kill, { success: true, message: 'Kill request for driver-1 submitted' });
  await assert.rejects(worker, /the worker is DEAD/);
  // What the extension must refuse.
  for (const bad of [
    { type: 'kill', requestId: 1, target: { kind: 'worker', id: 'w' } },
    { type: 'requestLogRange', requestId: 1, source: { appId: 'a', logType: 'passwd' }, length: 1 },
    { type: 'followLog', followId: '', source: { driverId: 'd', logType: 'stdout' }, offset: 0 },
    { type: 'submit', app: 'x.js' },
  ]) {
    assert.equal(Value.Check(PanelToExtension, bad), false, JSON.stringify(bad));
  }
});

test('a follow receives its chunks as bytes and is stopped when the view closes', () => {
  const { source, posted, deliver } = fakePanel();
  const got: string[] = [];
  const stop = source.followLog({ driverId: 'driver-1', logType: 'stdout' }, 10, {
    chunk: (offset, bytes) => got.push(`${offset}:${new TextDecoder().decode(bytes)}`),
    ended: (total, reason) => got.push(`end ${total} ${reason}`),
  });
  const follow = posted[0] as Extract<PanelToExtension, { type: 'followLog' }>;
  assert.equal(follow.offset, 10);
  deliver({
    type: 'logChunk',
    followId: follow.followId,
    offset: 10,
    data: Buffer.from('héllo').toString('base64'),
  });
  deliver({ type: 'logChunk', followId: 'someone-else', offset: 0, data: 'eA==' });
  stop();
  assert.deepEqual(posted[1], { type: 'stopFollowLog', followId: follow.followId });
  deliver({ type: 'logChunk', followId: follow.followId, offset: 16, data: 'eA==' });
  assert.deepEqual(got, ['10:héllo']);
});

test("the panel asks /api/v1 through the extension: the answer's JSON, or its error", async () => {
  const { source, posted, deliver } = fakePanel();
  const jobs = source.api('/applications/app-1/jobs');
  const ask = posted.at(-1) as Extract<PanelToExtension, { type: 'requestApi' }>;
  assert.equal(Value.Check(PanelToExtension, ask), true);
  assert.deepEqual(
    { ...ask, requestId: 0 },
    {
      type: 'requestApi',
      requestId: 0,
      path: '/applications/app-1/jobs',
    },
  );
  deliver({ type: 'apiResult', requestId: ask.requestId, body: '[{"jobId":0}]' });
  assert.deepEqual(await jobs, [{ jobId: 0 }]);
  const missing = source.api('/applications/app-2/jobs');
  const ask2 = posted.at(-1) as Extract<PanelToExtension, { type: 'requestApi' }>;
  deliver({ type: 'apiResult', requestId: ask2.requestId, error: 'unknown app: app-2' });
  await assert.rejects(missing, /unknown app: app-2/);
  for (const path of [
    '/metrics/prometheus',
    '/applications/../x',
    `/applications/${'a'.repeat(2000)}`,
  ])
    assert.equal(
      Value.Check(PanelToExtension, { type: 'requestApi', requestId: 1, path }),
      false,
      `${path.slice(0, 40)} is refused by the extension's check`,
    );
});
