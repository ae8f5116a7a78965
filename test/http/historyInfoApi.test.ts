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
  MAX_REASON_LENGTH,
  MAX_UNREADABLE_SHOWN,
  mountHistoryInfo,
} from '../../backend/http/historyInfoApi.js';
import type { HistoryInfo } from '../../webview/protocol.js';
import { appEvents } from '../history/appEvents.js';

test('/api/history names the folder, the cut logs, and the unreadable ones with why, bounded and printable', async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'wick-history-info-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  for (const id of ['app-done', 'app-cut']) {
    const w = await EventLogWriter.start({ dir: d, appId: id, compress: false });
    for (const e of appEvents(id, Date.UTC(2026, 11, 1), id === 'app-done')) w.write(e);
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
