import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import '../../backend/conf/all.js';
import { HistoryConf } from '../../backend/conf/history.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import {
  defaultEventLogDir,
  eventLogDir,
  historyLogDir,
} from '../../backend/eventlog/eventLogDir.js';

const env = { XDG_STATE_HOME: '/state' };

test('event logs live under the user state dir unless set; the history reads where drivers write', () => {
  assert.equal(defaultEventLogDir(env), join('/state', 'wick', 'event-logs'));
  assert.equal(eventLogDir(new WickConf(), env), '/state/wick/event-logs');
  assert.equal(historyLogDir(new WickConf(), env), '/state/wick/event-logs');
  assert.equal(historyLogDir(new WickConf({ 'wick.eventLog.dir': '/logs' }), env), '/logs');
  assert.equal(
    historyLogDir(
      new WickConf({ 'wick.eventLog.dir': '/logs', 'wick.history.fs.logDirectory': '/h' }),
      env,
    ),
    '/h',
  );
});

test("Spark's spark.history.* names and file: URLs are read; another scheme is refused by name", () => {
  const conf = new WickConf({
    'spark.history.fs.logDirectory': 'file:/tmp/spark-events',
    'spark.history.fs.update.interval': '30',
    'spark.history.fs.cleaner.maxAge': '3600',
    'spark.history.fs.cleaner.enabled': 'true',
    'spark.history.retainedApplications': '7',
    'spark.history.ui.port': '18081',
  });
  assert.equal(historyLogDir(conf, env), '/tmp/spark-events');
  assert.equal(conf.get(HistoryConf.updateInterval), 30_000, 'a bare number is seconds, as Spark');
  assert.equal(conf.get(HistoryConf.cleanerMaxAge), 3_600_000);
  assert.equal(conf.get(HistoryConf.cleanerEnabled), true);
  assert.equal(conf.get(HistoryConf.retainedApplications), 7);
  assert.equal(conf.get(HistoryConf.uiPort), 18081);
  assert.equal(
    historyLogDir(new WickConf({ 'wick.history.fs.logDirectory': 'file:///x/y' }), env),
    '/x/y',
  );
  assert.throws(
    () =>
      historyLogDir(new WickConf({ 'spark.history.fs.logDirectory': 'hdfs://nn:8020/logs' }), env),
    /wick\.history\.fs\.logDirectory is "hdfs:\/\/nn:8020\/logs": Wick reads event logs from local folders only/,
  );
});
