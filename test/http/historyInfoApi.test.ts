/** `/api/history` over a real provider and real log files, asked through Hono's own request. */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Hono } from 'hono';
import { EventLogWriter } from '../../backend/eventlog/EventLogWriter.js';
import { HistoryProvider } from '../../backend/history/HistoryProvider.js';
import {
  MAX_FAILURE_LENGTH,
  MAX_REASON_LENGTH,
  MAX_UNREADABLE_SHOWN,
  mountHistoryInfo,
} from '../../backend/http/historyInfoApi.js';
import type { HistoryAppInfo, HistoryInfo } from '../../webview/protocol.js';
import { appEvents } from '../history/appEvents.js';

test('/api/history names the folder, the cut logs, and the unreadable ones with why, bounded and printable', async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'wick-history-info-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  for (const id of ['app-done', 'app-cut', 'app-failed']) {
    const w = await EventLogWriter.start({ dir: d, appId: id, compress: false });
    const events = appEvents(id, Date.UTC(2026, 11, 1), id !== 'app-cut');
    const end = events.at(-1);
    if (id === 'app-failed' && end?.event === 'WickListenerApplicationEnd')
      end.failure = 'Error: boom\u0007\n    at main (app.ts:3:9)';
    for (const e of events) w.write(e);
    await w.close();
  }
  // The writer stopped inside a line.
  appendFileSync(join(d, 'app-cut'), '{"event":"WickListenerJobEnd","jo');
  const junk = MAX_UNREADABLE_SHOWN + 5;
  for (let i = 0; i < junk; i++)
    writeFileSync(
      join(d, `app-junk-${String(i).padStart(3, '0')}`),
      `\u0000\u0007${'x'.repeat(3000)}\n`,
    );
  const provider = new HistoryProvider({ logDir: d });
  await provider.scan();
  const app = new Hono();
  mountHistoryInfo(app, provider);
  const r = await app.request('/api/history');
  assert.equal(r.status, 200);
  const info = (await r.json()) as HistoryInfo;
  assert.equal(info.logDir, d);
  assert.deepEqual(info.cut, ['app-cut']);
  assert.deepEqual(info.failed, ['app-failed']);
  assert.equal(info.unreadableCount, junk);
  assert.equal(info.unreadable.length, MAX_UNREADABLE_SHOWN, 'the first ones only');
  assert.equal(info.unreadable[0]?.name, 'app-junk-000', 'by name');
  for (const b of info.unreadable) {
    assert.match(b.reason, /line 1 is not a JSON event/);
    assert.ok(b.reason.length <= MAX_REASON_LENGTH + 1, `${b.reason.length} characters`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: their absence is the point
    assert.doesNotMatch(b.reason, /[\u0000-\u001f]/);
  }
});

test('/api/history/applications/{app}: its log, cut or not, and its failure with its lines', async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'wick-history-app-info-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  const w = await EventLogWriter.start({ dir: d, appId: 'app-failed', compress: false });
  const events = appEvents('app-failed');
  const end = events.at(-1);
  assert.equal(end?.event, 'WickListenerApplicationEnd');
  if (end?.event === 'WickListenerApplicationEnd')
    end.failure = `Error: boom\u0007\n    at main (app.ts:3:9)\n${'x'.repeat(MAX_FAILURE_LENGTH)}`;
  for (const e of events) w.write(e);
  await w.close();
  const provider = new HistoryProvider({ logDir: d });
  await provider.scan();
  const app = new Hono();
  mountHistoryInfo(app, provider);
  const r = await app.request('/api/history/applications/app-failed');
  assert.equal(r.status, 200);
  const got = (await r.json()) as HistoryAppInfo;
  assert.equal(got.appId, 'app-failed');
  assert.equal(got.logName, 'app-failed');
  assert.equal(got.cut, false);
  assert.ok(got.fileSize > 0);
  assert.ok(got.failure?.startsWith('Error: boom?\n    at main (app.ts:3:9)\n'), got.failure);
  assert.equal(got.failure?.length, MAX_FAILURE_LENGTH + 1, 'cut, with an ellipsis');
  const none = await app.request('/api/history/applications/app-none');
  assert.equal(none.status, 404);
  assert.deepEqual(await none.json(), {
    error: 'No event log of application "app-none" is listed',
  });
});
