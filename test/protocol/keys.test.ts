/**
 * The keys of docs/protocol.md ("With authentication", "Which key a driver holds") against the
 * code: every test vector on the page is computed here with Wick's own functions, so the page
 * cannot drift from them; and a real master lets in a driver that derived a submission key for an
 * id it chose itself, gives it its application's key, and refuses a wrong key for that id.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { RegisterApplication, RegisteredApplication } from '../../backend/protocol/app.js';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import { clientProof, serverProof } from '../../backend/rpc/auth.js';
import { AppKeyRing, deriveKey } from '../../backend/rpc/credentials.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import { startMaster } from '../helpers/cluster.js';
import { appDescription } from '../helpers/masterMocks.js';
import { testProtocol } from '../helpers/protocol.js';
import { Recorder } from '../helpers/recorder.js';

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
const section = doc.slice(
  doc.indexOf('### With authentication'),
  doc.indexOf('### Handshake failures'),
);

/** The one backquoted value after `label` in the section, e.g. nonce `0011…`. */
function after(label: string, from = 0): { value: string; at: number } {
  const re = new RegExp(`${label}\\s+\`([^\`]+)\``, 'g');
  re.lastIndex = from;
  const m = re.exec(section);
  assert.ok(m, `docs/protocol.md, "With authentication": no ${label} \`…\``);
  return { value: m[1] as string, at: re.lastIndex };
}

test('the handshake test vector of docs/protocol.md is what Wick computes', () => {
  const secret = after('secret').value;
  const nonce = after('nonce').value;
  const challenge = after('challenge').value;
  assert.equal(secret, 'swordfish');
  assert.equal(after('server proof').value, serverProof(secret, nonce, challenge));
  assert.equal(after('client proof').value, clientProof(secret, nonce, challenge));
});

test('the derived-key test vectors of docs/protocol.md are what Wick derives, and prove as documented', () => {
  const secret = after('secret').value;
  const nonce = after('nonce').value;
  const challenge = after('challenge').value;
  const vectors = [
    ...section.matchAll(/`(submission|app)` key for id `([^`]+)`: `([0-9a-f]{64})`/g),
  ];
  assert.deepEqual(
    vectors.map((m) => m[1]),
    ['submission', 'app'],
  );
  for (const [, kind, id, key] of vectors) {
    assert.equal(
      key,
      deriveKey(secret, kind as 'submission' | 'app', id as string),
      `${kind}:${id}`,
    );
  }
  const submissionKey = vectors[0]?.[3] as string;
  // The pair of proofs after the derived keys' vector is the submission key's (the pairs before
  // it are the secret's, plain and over TLS).
  const keysAt = section.indexOf('Test vector for derived keys');
  assert.ok(keysAt > 0, 'the derived keys have their test vector');
  assert.equal(after('server proof', keysAt).value, serverProof(submissionKey, nonce, challenge));
  assert.equal(after('client proof', keysAt).value, clientProof(submissionKey, nonce, challenge));
});

test("the ids a driver may choose are HelloParams' credential ids, as the page says", () => {
  const hello = JSON.parse(
    readFileSync(
      new URL('../../docs/protocol/wire/HelloParams.schema.json', import.meta.url),
      'utf8',
    ),
  ) as { properties: { credential: { properties: { id: { pattern: string } } } } };
  const pattern = hello.properties.credential.properties.id.pattern;
  assert.ok(
    doc.slice(doc.indexOf('### Which key a driver holds')).includes(`\`${pattern}\``),
    `"Which key a driver holds" should give the id pattern ${pattern}`,
  );
});

test('a master lets in a driver with a submission key for an id it chose itself, and tells it its application key', {
  timeout: 60_000,
}, async (t) => {
  const secret = 'a-cluster-secret-for-keys-test';
  const master = await startMaster(t, { conf: { 'wick.authenticate.secret': secret } });
  const id = 'my-own-driver.7';
  const driverEnv = await RpcEnv.create({
    protocol: testProtocol,
    name: 'selfStartedDriver',
    host: '127.0.0.1',
    port: 0,
    auth: {
      credential: { kind: 'submission', id, key: deriveKey(secret, 'submission', id) },
      keys: new AppKeyRing(),
    },
  });
  t.after(() => driverEnv.stop());
  const endpoint = new Recorder();
  driverEnv.setupEndpoint('AppClient', endpoint);
  const ref = await driverEnv.setupEndpointRef(master.address, 'Master');
  ref.send(
    RegisterApplication({ appDescription: appDescription(), driver: endpoint.self.toData() }),
  );
  const registered = await endpoint.next(RegisteredApplication);
  assert.equal(registered.appKey, deriveKey(secret, 'app', registered.appId));

  // The same id with a key not derived from the secret is refused at the handshake.
  const forger = await RpcEnv.create({
    protocol: testProtocol,
    name: 'forgedDriver',
    clientMode: true,
    auth: {
      credential: {
        kind: 'submission',
        id,
        key: deriveKey('another-secret-entirely', 'submission', id),
      },
      keys: undefined,
    },
  });
  t.after(() => forger.stop());
  await assert.rejects(
    forger.setupEndpointRef(master.address, 'Master'),
    (err: unknown) => err instanceof RpcError && err.code === RpcErrorCode.AuthenticationFailed,
  );
});
