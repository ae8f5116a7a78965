/** The history server's AppStatusSource over a real provider and real log files. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EventLogWriter } from '../../backend/eventlog/EventLogWriter.js';
import { HistoryProvider } from '../../backend/history/HistoryProvider.js';
import { historyStatusSource } from '../../backend/http/historyStatusSource.js';
import { appEvents } from '../history/appEvents.js';

const RETENTION = { jobs: 100, stages: 100, tasks: 1000, deadExecutors: 100 };

test('a page asking jobs, stages and executors at once replays the log once; a kept store is reused', async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'wick-history-source-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  const w = await EventLogWriter.start({ dir: d, appId: 'app-one', compress: false });
  for (const e of appEvents('app-one')) w.write(e);
  await w.close();
  const provider = new HistoryProvider({ logDir: d });
  await provider.scan();
  let replays = 0;
  const forEachEvent = provider.forEachEvent.bind(provider);
  provider.forEachEvent = (appId, fn) => {
    replays++;
    return forEachEvent(appId, fn);
  };
  const source = historyStatusSource(provider, RETENTION, 2);
  const [a, b, c] = await Promise.all([
    source.store('app-one'),
    source.store('app-one'),
    source.store('app-one'),
  ]);
  assert.ok(a);
  assert.equal(a, b);
  assert.equal(a, c);
  assert.equal(replays, 1);
  assert.equal(await source.store('app-one'), a);
  assert.equal(replays, 1, 'kept');
  assert.equal(await source.store('app-none'), undefined);
  assert.equal(replays, 1, 'nothing replayed for an unknown id');
});
