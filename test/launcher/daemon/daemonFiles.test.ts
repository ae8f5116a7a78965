import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  daemonDirs,
  daemonFiles,
  instancesWithPidFiles,
  rotateLog,
} from '../../../backend/launcher/daemon/daemonFiles.js';
import { isWickDaemon } from '../../../backend/launcher/daemon/pidFile.js';
import { instancePort, workerInstances } from '../../../backend/launcher/daemon/workerInstances.js';

test("Spark's defaults: pid files in /tmp, logs in $WICK_HOME/logs, else the user's state dir", () => {
  const d = daemonDirs({ HOME: '/home/u', XDG_STATE_HOME: '/s' });
  assert.equal(d.pidDir, '/tmp');
  assert.equal(d.logDir, '/s/wick/logs');
  assert.equal(d.logMaxFiles, 5);
  assert.equal(daemonDirs({ WICK_HOME: '/opt/wick' }).logDir, '/opt/wick/logs');
  const spark = daemonDirs({
    SPARK_PID_DIR: '/p',
    SPARK_LOG_DIR: '/l',
    SPARK_IDENT_STRING: 'ops',
    SPARK_LOG_MAX_FILES: '2',
  });
  assert.deepEqual(spark, { pidDir: '/p', logDir: '/l', ident: 'ops', logMaxFiles: 2 });
  assert.equal(
    daemonDirs({ SPARK_PID_DIR: '/p', WICK_PID_DIR: '/w' }).pidDir,
    '/w',
    "Wick's name wins",
  );
});

test('bad launcher variables are named with what was expected', () => {
  assert.throws(
    () => daemonDirs({ WICK_LOG_MAX_FILES: '0' }),
    /WICK_LOG_MAX_FILES is "0": expected a whole number from 1 to 100/,
  );
  assert.throws(() => daemonDirs({ WICK_IDENT_STRING: 'a/b' }), /WICK_IDENT_STRING is "a\/b"/);
  assert.throws(
    () => workerInstances(undefined, { SPARK_WORKER_INSTANCES: '65' }),
    /SPARK_WORKER_INSTANCES is "65": expected a whole number of workers from 1 to 64/,
  );
  assert.equal(workerInstances(undefined, { SPARK_WORKER_INSTANCES: '3' }), 3);
  assert.equal(workerInstances('2', { SPARK_WORKER_INSTANCES: '3' }), 2, 'the flag wins');
});

test("file names as spark-daemon.sh's: pid without the host, log with it", () => {
  const dirs = { pidDir: '/p', logDir: '/l', ident: 'ops', logMaxFiles: 5 };
  const f = daemonFiles(dirs, 'worker', 2);
  assert.equal(f.pidFile, '/p/wick-ops-worker-2.pid');
  assert.match(f.logFile, /^\/l\/wick-ops-worker-2-[\w.-]+\.out$/);
  assert.equal(f.label, 'worker 2');
  assert.equal(daemonFiles(dirs, 'master', 1).label, 'master');
  const found = instancesWithPidFiles(dirs, 'worker', () => [
    'wick-ops-worker-3.pid',
    'wick-ops-worker-1.pid',
    'wick-ops-master-1.pid',
    'wick-other-worker-2.pid',
    'wick-ops-worker-1.pid.bak',
  ]);
  assert.deepEqual(found, [1, 3]);
});

test('ports counted up per instance as start-worker.sh does; 0 stays any free port', () => {
  assert.equal(instancePort(7078, 1), 7078);
  assert.equal(instancePort(7078, 3), 7080);
  assert.equal(instancePort(0, 3), 0);
  assert.throws(() => instancePort(65535, 2), /port 65536 .* above 65535/);
});

test('rotateLog keeps the last N, shifting each up and dropping the oldest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-rotate-'));
  try {
    const log = join(dir, 'x.out');
    rotateLog(log, 3);
    assert.deepEqual(readdirSync(dir), [], 'nothing to rotate');
    for (let run = 1; run <= 5; run++) {
      rotateLog(log, 3);
      writeFileSync(log, `run ${run}`);
    }
    assert.deepEqual(readdirSync(dir).sort(), ['x.out', 'x.out.1', 'x.out.2', 'x.out.3']);
    assert.equal(readFileSync(log, 'utf8'), 'run 5');
    assert.equal(readFileSync(`${log}.1`, 'utf8'), 'run 4');
    assert.equal(readFileSync(`${log}.3`, 'utf8'), 'run 2');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a pid is a Wick daemon only when its command line runs the CLI with that command', () => {
  assert.ok(
    isWickDaemon(['/usr/bin/node', '/opt/wick/dist/wick.cjs', 'master', '--print-ready'], 'master'),
  );
  assert.ok(isWickDaemon(['node', '/opt/wick/bin/wick.js', 'worker', 'wick://h:7077'], 'worker'));
  assert.ok(
    !isWickDaemon(['node', '/opt/wick/dist/wick.cjs', 'worker', 'wick://h:7077'], 'master'),
  );
  assert.ok(!isWickDaemon(['sleep', '600'], 'master'));
  assert.ok(!isWickDaemon(['node', '/x/notwick.js', 'master'], 'master'));
});
