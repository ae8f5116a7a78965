import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  DEFAULT_SSH_OPTS,
  remoteCommand,
  shellWord,
  sshOptions,
} from '../../../backend/launcher/cluster/onHosts.js';

test('ssh options: accept-new by default; WICK_SSH_OPTS or SPARK_SSH_OPTS replace them, split at blanks', () => {
  assert.deepEqual(sshOptions({}), DEFAULT_SSH_OPTS);
  assert.ok(DEFAULT_SSH_OPTS.includes('StrictHostKeyChecking=accept-new'));
  assert.deepEqual(sshOptions({ SPARK_SSH_OPTS: ' -p 2222  -o BatchMode=yes ' }), [
    '-p',
    '2222',
    '-o',
    'BatchMode=yes',
  ]);
});

test('the remote command quotes every word and passes on settings, never the secret', () => {
  assert.equal(shellWord("it's"), `'it'\\''s'`);
  const cmd = remoteCommand(
    {
      home: '/opt/wick 1',
      env: {
        WICK_AUTH_SECRET: 'S3CRET',
        WICK_LOG_DIR: 'rel/logs',
        SPARK_WORKER_CORES: '2',
        WICK_MASTER_HOST: 'm',
      },
    },
    ['start-worker', '--secret-stdin', 'wick://m:7077'],
  );
  assert.ok(cmd.startsWith(`cd '/opt/wick 1' && exec env PATH=`), cmd);
  assert.ok(!cmd.includes('S3CRET'));
  assert.ok(
    cmd.includes(`WICK_LOG_DIR='${join(process.cwd(), 'rel/logs')}'`),
    'a relative dir made absolute',
  );
  assert.ok(cmd.includes(`SPARK_WORKER_CORES='2'`));
  assert.ok(!cmd.includes('WICK_MASTER_HOST'), "the master's own settings stay here");
  assert.ok(!cmd.includes('WICK_HOME='), 'WICK_HOME only when set here: it moves the log dir');
  assert.ok(
    cmd.endsWith(`node '/opt/wick 1/bin/wick.js' 'start-worker' '--secret-stdin' 'wick://m:7077'`),
    cmd,
  );
});
