/**
 * How every process finds the cluster secret (one order, one meaning of "on"), and the secret a
 * master makes when there is none.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import {
  defaultSecretFile,
  ensureClusterSecret,
  resolveClusterAuth,
  withoutSecrets,
} from '../../backend/rpc/clusterSecret.js';

const A = 'secret-from-conf-0001';
const B = 'secret-from-file-0002';
const C = 'secret-from-envv-0003';
const D = 'secret-from-dflt-0004';

function place() {
  const dir = mkdtempSync(join(tmpdir(), 'wick-secret-'));
  const env: NodeJS.ProcessEnv = { XDG_CONFIG_HOME: join(dir, 'config') };
  const file = join(dir, 'given');
  writeFileSync(file, `${B}\nsecond line ignored\n`);
  return { dir, env, file };
}

test('first found wins: conf, then the secret file, then WICK_AUTH_SECRET, then the default file', () => {
  const { env, file } = place();
  const made = ensureClusterSecret(resolveClusterAuth(new WickConf(), env));
  assert.equal(made.mode, 'secret');
  writeFileSync(defaultSecretFile(env), `${D}\n`);
  const all = { 'wick.authenticate.secret': A, 'wick.authenticate.secret.file': file };
  const found = (conf: Record<string, string>, e: NodeJS.ProcessEnv) => {
    const r = resolveClusterAuth(new WickConf(conf), e);
    return r.mode === 'secret' ? r.secret : r.mode;
  };
  assert.equal(found(all, { ...env, WICK_AUTH_SECRET: C }), A);
  assert.equal(
    found({ 'wick.authenticate.secret.file': file }, { ...env, WICK_AUTH_SECRET: C }),
    B,
  );
  assert.equal(found({}, { ...env, WICK_AUTH_SECRET: C }), C);
  assert.equal(found({}, env), D);
  assert.equal(found({ ...all, 'wick.authenticate': 'false' }, env), 'open');
});

test('a master with no secret makes one, readable by its user only, and finds it next time', () => {
  const { env } = place();
  const none = resolveClusterAuth(new WickConf(), env);
  assert.equal(none.mode, 'none');
  const made = ensureClusterSecret(none);
  assert.ok(made.mode === 'secret' && made.generated && made.secret.length >= 24);
  assert.equal(statSync(defaultSecretFile(env)).mode & 0o777, 0o600);
  const again = resolveClusterAuth(new WickConf(), env);
  assert.ok(again.mode === 'secret' && made.mode === 'secret' && again.secret === made.secret);
  // Two masters of one machine racing: the second takes the first's.
  const raced = ensureClusterSecret(none);
  assert.ok(raced.mode === 'secret' && raced.secret === made.secret && !raced.generated);
  assert.equal(readFileSync(defaultSecretFile(env), 'utf8').trim(), made.secret);
});

test('bad secrets are refused naming where they came from and what is expected', () => {
  const { env, dir } = place();
  assert.throws(
    () => resolveClusterAuth(new WickConf({ 'wick.authenticate.secret': 'short' }), env),
    /wick\.authenticate\.secret has 5 characters; it needs at least 16/,
  );
  assert.throws(
    () =>
      resolveClusterAuth(
        new WickConf({ 'wick.authenticate.secret.file': join(dir, 'missing') }),
        env,
      ),
    /wick\.authenticate\.secret\.file is .*missing, which does not exist/,
  );
  assert.throws(
    () => resolveClusterAuth(new WickConf({ 'wick.authenticate': 'true' }), env),
    /wick\.authenticate is true but no secret is set/,
  );
});

test('a secret file may be a link (a Kubernetes secret volume is one)', () => {
  const { env, dir, file } = place();
  const link = join(dir, 'link');
  symlinkSync(file, link);
  const r = resolveClusterAuth(new WickConf({ 'wick.authenticate.secret.file': link }), env);
  assert.ok(r.mode === 'secret' && r.secret === B);
});

test('what an application is handed keeps everything but how to find the secret', () => {
  assert.deepEqual(
    withoutSecrets({
      'wick.authenticate.secret': A,
      'wick.authenticate.secret.file': '/x',
      'wick.authenticate': 'true',
      'wick.executor.memory': '1g',
    }),
    { 'wick.authenticate': 'true', 'wick.executor.memory': '1g' },
  );
});
