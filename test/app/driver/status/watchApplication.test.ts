/**
 * watchApplication on a real bus and a real event log file, with the master's side a recorder:
 * what is posted while the event log's file opens (a standby executor's registration, which takes
 * milliseconds) reaches both the log and the master's report, after the application's start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LiveListenerBus } from '../../../../backend/app/driver/LiveListenerBus.js';
import { watchApplication } from '../../../../backend/app/driver/status/watchApplication.js';
import { WickConf } from '../../../../backend/conf/WickConf.js';
import { readEventLog } from '../../../../backend/eventlog/readEventLog.js';
import type { WickListenerEvent } from '../../../../backend/protocol/listener.js';

const APP = 'app-20261207000000-0000';

test('an executor added while the event log opens reaches the log and the master, after the start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-watch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const conf = new WickConf()
    .set('wick.eventLog.enabled', 'true')
    .set('wick.eventLog.dir', dir)
    .set('wick.ui.showConsoleProgress', 'false');
  const bus = new LiveListenerBus();
  const reported: WickListenerEvent[] = [];
  const watching = watchApplication(conf, bus, { appId: APP, appName: 'early' }, async (events) => {
    reported.push(...events);
  });
  // watchApplication is now waiting for the event log's file: this is posted in between.
  bus.post({ event: 'WickListenerExecutorAdded', executorId: '0', host: 'h', cores: 2 });
  const watch = await watching;
  await watch.end();

  const kinds = (events: { event: string }[]) =>
    events.map((e) => e.event.replace('WickListener', ''));
  const logged: { event: string }[] = [];
  for await (const e of readEventLog(join(dir, APP))) logged.push(e as { event: string });
  assert.deepEqual(kinds(logged), [
    'ApplicationStart',
    'EnvironmentUpdate',
    'ExecutorAdded',
    'ApplicationEnd',
  ]);
  assert.deepEqual(kinds(reported), kinds(logged), 'the master is told the same, in order');
});
