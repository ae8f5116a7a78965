/**
 * `wick join` on the master's machine: the line that joins a worker, with the secret and, once
 * the master has made the cluster's certificate, the fingerprint a worker pins; without TLS, or
 * before any certificate, no pin.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { ensureClusterCertificate } from '../../backend/rpc/tls/clusterCertificate.js';
import { wick } from '../helpers/cluster.js';

test('the join line carries the cluster certificate’s fingerprint', async () => {
  const config = mkdtempSync(join(tmpdir(), 'wick-join-test-'));
  mkdirSync(join(config, 'wick'), { recursive: true });
  const secret = 'join-test-secret-0123456789';
  writeFileSync(join(config, 'wick', 'cluster-secret'), `${secret}\n`, { mode: 0o600 });
  const env = { XDG_CONFIG_HOME: config, WICK_AUTH_SECRET: undefined };

  const before = await wick(['join', 'wick://10.0.0.5:7077'], env);
  assert.equal(before.code, 0, before.stderr);
  // The secret is saved on the worker's machine (wick join --save), never put on a command line.
  const lines = (pin: string) =>
    `# On the worker's machine, as the user that runs the worker: save the secret (paste it when asked),\n#   ${secret}\nwick join --save\nwick worker wick://10.0.0.5:7077${pin}\n`;
  assert.equal(before.stdout, lines(''));

  process.env.XDG_CONFIG_HOME = config;
  const cert = await ensureClusterCertificate(new WickConf(), ['10.0.0.5']);
  const after = await wick(['join', 'wick://10.0.0.5:7077'], env);
  assert.equal(after.stdout, lines(` --conf wick.ssl.fingerprint=${cert.fingerprint}`));
  // The same certificate on the next start: the pin stays true.
  assert.equal((await ensureClusterCertificate(new WickConf(), [])).fingerprint, cert.fingerprint);

  const plain = await wick(
    ['join', 'wick://10.0.0.5:7077', '--conf', 'wick.ssl.enabled=false'],
    env,
  );
  assert.equal(plain.stdout, lines(''));
});
