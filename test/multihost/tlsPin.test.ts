/**
 * Pinning across hosts, as an operator joins workers: the master makes its secret and its
 * certificate on a fresh machine and prints the join line, which carries the certificate's
 * fingerprint. A worker given that line registers; a worker given another fingerprint is refused
 * at every attempt with both fingerprints and what to do, and never registers. The master's web
 * UI answers https with that certificate, and refuses plain http from another host with the
 * https address.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';

/** Run on a host: GETs a URL, pins the certificate's SHA-256, prints status and fingerprint. */
const FETCH = `
const [url, pin] = process.argv.slice(1);
const https = await import('node:https');
const http = await import('node:http');
const lib = url.startsWith('https:') ? https : http;
const req = lib.get(url, { rejectUnauthorized: false }, (res) => {
  const fp = res.socket.getPeerCertificate?.()?.fingerprint256?.replaceAll(':', '').toLowerCase();
  if (pin && 'sha256:' + fp !== pin) { console.log('PIN MISMATCH sha256:' + fp); process.exit(3); }
  let body = '';
  res.on('data', (d) => (body += d));
  res.on('end', () => console.log(JSON.stringify({ status: res.statusCode, fp: fp && 'sha256:' + fp, body })));
});
req.on('error', (e) => { console.log('ERROR ' + e.message); process.exit(2); });
`;

test('the join line pins the master: a wrong fingerprint is refused, the right one joins; the UI is https', {
  skip: hostsUnavailable(),
  timeout: 180_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster({ env: { WICK_AUTH_SECRET: '' } });
  // The announcement: the secret to save on the worker's machine, then the worker's line.
  const [, secret] = await master.waitForStderr(/^ {4}secret: (\S+)$/m);
  const [, pin] = await master.waitForStderr(
    /^ {4}wick worker \S+ --conf wick\.ssl\.fingerprint=(sha256:[0-9a-f]{64})$/m,
  );
  const env = { WICK_AUTH_SECRET: secret as string };
  const wrong = `sha256:${'0f'.repeat(32)}`;

  const refused = await net.host('w1').startWorker(master.url, {
    cores: 1,
    env,
    conf: { 'wick.ssl.fingerprint': wrong },
  });
  const [refusal] = await refused.waitForStderr(/presented the certificate .* do not connect\./);
  assert.ok(refusal.includes(pin as string), refusal);
  assert.ok(refusal.includes(wrong), refusal);
  assert.match(refusal, /wick join/);

  const joined = await net.host('w2').startWorker(master.url, {
    cores: 1,
    env,
    conf: { 'wick.ssl.fingerprint': pin as string },
  });
  const user = net.host('user');
  const workers = async () => {
    const r = await user.wick(['status', '--json', '--master', master.url], {
      env: { ...env, WICK_TLS_FINGERPRINT: pin as string },
    });
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { workers: { id: string; state: string }[] }).workers;
  };
  await waitFor(
    'the worker with the right pin registered',
    async () => (await workers()).some((w) => w.id === joined.workerId && w.state === 'ALIVE'),
    t.signal,
  );
  // It tried again meanwhile, and was refused again: never registered.
  await refused.waitForStderr(/presented the certificate[\s\S]*presented the certificate/);
  assert.ok(
    !(await workers()).some((w) => w.id === refused.workerId),
    'the wrongly pinned worker registered',
  );

  // The web UI: https with the pinned certificate; plain http from another host refused.
  assert.match(master.webUiUrl, /^https:\/\//);
  const get = async (url: string, withPin: boolean) => {
    const p = user.spawn(process.execPath, [
      '--input-type=module',
      '-e',
      FETCH,
      url,
      withPin ? (pin as string) : '',
    ]);
    const end = await p.closed;
    return { code: end.code, out: p.stdout.trim() };
  };
  const health = await get(`${master.webUiUrl}/health`, true);
  assert.equal(health.code, 0, health.out);
  assert.deepEqual(JSON.parse(health.out), { status: 200, fp: pin, body: 'ok\n' });
  const plain = await get(`${master.webUiUrl.replace('https:', 'http:')}/health`, false);
  assert.equal(plain.code, 0, plain.out);
  const answer = JSON.parse(plain.out) as { status: number; body: string };
  assert.equal(answer.status, 400);
  assert.ok(answer.body.includes(`open ${master.webUiUrl}/`), answer.body);
  assert.ok(answer.body.includes(pin as string), answer.body);
});
