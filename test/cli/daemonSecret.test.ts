/**
 * A daemon's WICK_AUTH_SECRET moves into its configuration and out of its environment, only where
 * it is the secret the daemon would use; messages still name where it came from.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeSecretFromEnvironment } from '../../backend/cli/daemonSecret.js';
import { RpcConf } from '../../backend/conf/rpc.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import { resolveClusterAuth } from '../../backend/rpc/clusterSecret.js';

const SECRET = 'a-secret-of-sixteen-or-more';

test('the environment’s secret goes into the conf and out of the environment, still named', () => {
  const conf = new WickConf({});
  const env: NodeJS.ProcessEnv = { WICK_AUTH_SECRET: SECRET, HOME: '/nowhere' };
  takeSecretFromEnvironment(conf, env);
  assert.deepEqual(env, { HOME: '/nowhere' });
  assert.equal(conf.get(RpcConf.authenticateSecret), SECRET);
  assert.deepEqual(resolveClusterAuth(conf, env), {
    mode: 'secret',
    secret: SECRET,
    source: 'WICK_AUTH_SECRET',
  });
});

test('a setting or a secret file still comes first; the environment’s copy is dropped anyway', () => {
  for (const settings of [
    { [RpcConf.authenticateSecret.key]: 'the-setting-comes-first-here' },
    { [RpcConf.authenticateSecretFile.key]: '/some/secret/file' },
  ]) {
    const conf = new WickConf(settings);
    const env: NodeJS.ProcessEnv = { WICK_AUTH_SECRET: SECRET };
    takeSecretFromEnvironment(conf, env);
    assert.deepEqual(env, {});
    assert.deepEqual(Object.fromEntries(conf.entries()), settings);
  }
});
