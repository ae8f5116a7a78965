/**
 * A web UI over https (UiServer with a WireSecurity that serves TLS; wick.ssl.loopback puts this
 * machine's loopback under the rules of every other address): a client that pins the certificate
 * gets its pages over TLS 1.3; plain http is answered 400 with the https address and the
 * fingerprint, never served; stop() closes the TLS front and its connections.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { UiServer } from '../../backend/http/UiServer.js';
import { WireSecurity } from '../../backend/rpc/tls/WireSecurity.js';

function get(
  lib: typeof http | typeof https,
  url: string,
): Promise<{ status: number; body: string; fingerprint?: string; protocol?: string | null }> {
  return new Promise((resolve, reject) => {
    const req = lib.get(url, { rejectUnauthorized: false } as https.RequestOptions, (res) => {
      const socket = res.socket as import('node:tls').TLSSocket;
      const raw = socket.getPeerCertificate?.()?.fingerprint256;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          fingerprint: raw ? `sha256:${raw.replaceAll(':', '').toLowerCase()}` : undefined,
          protocol: socket.getProtocol?.(),
        }),
      );
    });
    req.on('error', reject);
  });
}

test('https with the served certificate; plain http refused with the https address', async (t) => {
  const security = await WireSecurity.fromConf(new WickConf({ 'wick.ssl.loopback': 'true' }), {
    bindHost: '127.0.0.1',
    name: 'ui-test',
  });
  assert.ok(security.serves);
  const ui = new UiServer(
    () => ({ config: { mode: 'master', host: 'web' }, title: 't' }),
    undefined,
  );
  ui.app.get('/hello', (c) => c.text(`hello over ${new URL(c.req.url).protocol}\n`));
  const port = await ui.listen('TestUI', '127.0.0.1', 0, 0, security);
  t.after(() => ui.stop());
  assert.equal(ui.scheme, 'https');

  const ok = await get(https, `https://127.0.0.1:${port}/hello`);
  assert.equal(ok.status, 200);
  assert.equal(ok.body, 'hello over https:\n');
  assert.equal(ok.fingerprint, security.fingerprint);
  assert.equal(ok.protocol, 'TLSv1.3');

  const plain = await get(http, `http://127.0.0.1:${port}/hello`);
  assert.equal(plain.status, 400);
  assert.ok(plain.body.includes(`open https://127.0.0.1:${port}/`), plain.body);
  assert.ok(plain.body.includes(security.fingerprint as string), plain.body);
  assert.ok(!plain.body.includes('hello over'), 'the route answered over plain http');

  await ui.stop();
  await assert.rejects(get(https, `https://127.0.0.1:${port}/hello`), /ECONNREFUSED/);
});
