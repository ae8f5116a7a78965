import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  parseWorkerHosts,
  readWorkerHosts,
} from '../../../backend/launcher/cluster/workersFile.js';

test('conf/workers: one host a line, # comments and blank lines skipped', () => {
  const text = '# workers\nw1\n  w2.example.com   # second\n\nops@10.0.0.3\n[::1]\n';
  assert.deepEqual(parseWorkerHosts(text, 'conf/workers'), [
    'w1',
    'w2.example.com',
    'ops@10.0.0.3',
    '[::1]',
  ]);
  assert.throws(
    () => parseWorkerHosts('w1\nw2 w3\n', 'conf/workers'),
    /conf\/workers:2: "w2 w3" is not a host/,
  );
  assert.throws(
    () => parseWorkerHosts('-oProxyCommand=x\n', 'f'),
    /f:1: "-oProxyCommand=x" is not a host/,
  );
  assert.throws(() => parseWorkerHosts('# none\n', 'f'), /f lists no host/);
});

test('conf/workers in $WICK_CONF_DIR, else conf/slaves with a deprecation line, else localhost', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-workers-'));
  try {
    assert.deepEqual(readWorkerHosts({ WICK_CONF_DIR: dir }), { hosts: ['localhost'] });
    writeFileSync(join(dir, 'slaves'), 'old1\n');
    const old = readWorkerHosts({ WICK_CONF_DIR: dir });
    assert.deepEqual(old.hosts, ['old1']);
    assert.match(old.deprecation ?? '', /slaves is deprecated .* rename it to .*workers/);
    writeFileSync(join(dir, 'workers'), 'new1\n');
    assert.deepEqual(readWorkerHosts({ WICK_CONF_DIR: dir }), {
      hosts: ['new1'],
      file: join(dir, 'workers'),
    });
    const other = join(dir, 'mine');
    writeFileSync(other, 'm1\nm2\n');
    assert.deepEqual(readWorkerHosts({ WICK_CONF_DIR: dir, SPARK_WORKERS: other }).hosts, [
      'm1',
      'm2',
    ]);
    assert.throws(
      () => readWorkerHosts({ WICK_WORKERS: join(dir, 'nope') }),
      /WICK_WORKERS is ".*nope", which does not exist/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
