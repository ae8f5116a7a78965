/** The history routes over a real provider and real log files, asked through Hono's own request. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Hono } from 'hono';
import { EventLogWriter } from '../../backend/eventlog/EventLogWriter.js';
import { HistoryProvider } from '../../backend/history/HistoryProvider.js';
import { mountHistoryApi } from '../../backend/http/historyApi.js';
import { version } from '../../backend/util/version.js';
import { appEvents } from '../history/appEvents.js';

test('/api/v1/applications lists what the provider lists, filtered by Spark query; /api/v1/version', async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'wick-history-api-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  for (const [id, end] of [
    ['app-done', true],
    ['app-running', false],
  ] as const) {
    const w = await EventLogWriter.start({ dir: d, appId: id, compress: false });
    for (const e of appEvents(id, Date.UTC(2026, 11, 1), end)) w.write(e);
    if (end) await w.close();
    else await w.flush();
  }
  const provider = new HistoryProvider({ logDir: d });
  await provider.scan();
  const app = new Hono();
  mountHistoryApi(app, provider, () => Date.UTC(2026, 11, 2));
  const get = async (path: string) => {
    const r = await app.request(path);
    return { status: r.status, body: (await r.json()) as unknown };
  };
  const all = await get('/api/v1/applications');
  assert.equal(all.status, 200);
  const list = all.body as {
    id: string;
    attempts: { completed: boolean; appSparkVersion: string }[];
  }[];
  assert.deepEqual(list.map((a) => [a.id, a.attempts[0]?.completed]).sort(), [
    ['app-done', true],
    ['app-running', false],
  ]);
  assert.equal(list[0]?.attempts[0]?.appSparkVersion, version);
  assert.deepEqual(
    ((await get('/api/v1/applications?status=completed')).body as { id: string }[]).map(
      (a) => a.id,
    ),
    ['app-done'],
  );
  assert.deepEqual(
    ((await get('/api/v1/applications/?status=running')).body as { id: string }[]).map((a) => a.id),
    ['app-running'],
  );
  const bad = await get('/api/v1/applications?limit=many');
  assert.equal(bad.status, 400);
  assert.match(
    (bad.body as { message: string }).message,
    /limit must be a whole number of 0 or more, got "many"/,
  );
  assert.deepEqual((await get('/api/v1/version')).body, { spark: version });
});
