/**
 * The worker's external shuffle service on real RpcEnvs, over map output files written here:
 * which application's blocks a fetch reads is decided by the key its connection proved (with
 * authentication off, by the appId it names), never by a field the fetcher chose; ids cannot
 * reach outside the application's dirs. The whole path through a cluster is in
 * test/app/shuffleService.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { FetchShuffleBlock, SHUFFLE_ENDPOINT } from '../../backend/protocol/shuffle.js';
import { type Credential, deriveKey } from '../../backend/rpc/credentials.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import { startShuffleService } from '../../backend/worker/shuffleService.js';

const SECRET = 'shuffle-service-test-secret-0123456789';
const A = 'app-20261203000000-0001';
const B = 'app-20261203000000-0002';

/** Two applications' local dirs, each with map output 0 of shuffle 0 by executor 0: "A…" / "B…". */
function appDirs(t: TestContext) {
  const root = mkdtempSync(join(tmpdir(), 'wick-test-ess-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dirs = new Map<string, string[]>();
  for (const [appId, text] of [
    [A, 'AAAA'],
    [B, 'BBBBBB'],
  ] as const) {
    const dir = join(root, `wick-executor-${appId}-x`);
    mkdirSync(join(dir, 'blockmgr-0'), { recursive: true });
    writeFileSync(join(dir, 'blockmgr-0', 'shuffle_0_0_0.data'), text);
    const index = Buffer.alloc(16);
    index.writeBigUInt64BE(BigInt(text.length), 8);
    writeFileSync(join(dir, 'blockmgr-0', 'shuffle_0_0_0.index'), index);
    dirs.set(appId, [dir]);
  }
  // A file beside the app dirs that no fetch may reach, and links to it that an application's
  // code could plant: a map output file, and a whole executor folder.
  const secret = join(root, 'secret.txt');
  writeFileSync(secret, 'nope');
  const a = dirs.get(A)?.[0] as string;
  const index = Buffer.alloc(16);
  index.writeBigUInt64BE(4n, 8);
  writeFileSync(join(a, 'blockmgr-0', 'shuffle_0_7_0.index'), index);
  symlinkSync(secret, join(a, 'blockmgr-0', 'shuffle_0_7_0.data'));
  mkdirSync(join(root, 'elsewhere'));
  writeFileSync(join(root, 'elsewhere', 'shuffle_0_0_0.index'), index);
  writeFileSync(join(root, 'elsewhere', 'shuffle_0_0_0.data'), 'nope');
  symlinkSync(join(root, 'elsewhere'), join(a, 'blockmgr-5'));
  return { existing: (appId: string) => dirs.get(appId) ?? [] };
}

async function service(t: TestContext, secret: string | undefined) {
  const env = await startShuffleService(
    new WickConf({ 'wick.shuffle.service.port': '0' }),
    '127.0.0.1',
    secret,
    appDirs(t),
  );
  t.after(() => env.stop());
  return env;
}

async function fetcher(t: TestContext, address: string, credential: Credential | undefined) {
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'fetcher',
    clientMode: true,
    auth: { credential, keys: undefined },
  });
  t.after(() => env.stop());
  return env.endpointRef({ address, name: SHUFFLE_ENDPOINT });
}

const block = { shuffleId: 0, mapId: 0, reduceId: 0, executorId: '0', offset: 0, length: 100 };
const appKey = (id: string): Credential => ({ kind: 'app', id, key: deriveKey(SECRET, 'app', id) });
const text = (chunk: { data: string }) => Buffer.from(chunk.data, 'base64').toString();

test("each connection reads its own application's blocks, whatever appId it names", async (t) => {
  const svc = await service(t, SECRET);
  const a = await fetcher(t, svc.address, appKey(A));
  const b = await fetcher(t, svc.address, appKey(B));
  assert.equal(text(await a.ask(FetchShuffleBlock(block))), 'AAAA');
  assert.equal(text(await b.ask(FetchShuffleBlock(block))), 'BBBBBB');
  await assert.rejects(
    a.ask(FetchShuffleBlock({ ...block, appId: B })),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, RpcErrorCode.NotPermitted);
      assert.match(
        err.message,
        new RegExp(`proved the key of ${A}, and may read that application's blocks only`),
      );
      return true;
    },
  );
  // Its own id named is fine.
  assert.equal(text(await a.ask(FetchShuffleBlock({ ...block, appId: A }))), 'AAAA');
});

test('only application keys open it; ids cannot leave the application dirs', async (t) => {
  const svc = await service(t, SECRET);
  const cluster = await fetcher(t, svc.address, { kind: 'cluster', key: SECRET });
  await assert.rejects(cluster.ask(FetchShuffleBlock(block)), /auth|key|secret/i);
  const wrong = await fetcher(t, svc.address, {
    kind: 'app',
    id: A,
    key: deriveKey('another-secret-0123456789', 'app', A),
  });
  await assert.rejects(wrong.ask(FetchShuffleBlock(block)), /auth|key|secret/i);
  const a = await fetcher(t, svc.address, appKey(A));
  for (const executorId of ['../..', '0/../..', '-1', '1e3', '0'.repeat(11)]) {
    await assert.rejects(
      a.ask(FetchShuffleBlock({ ...block, executorId })),
      (err: Error & { code?: number }) => {
        assert.equal(err.code, RpcErrorCode.ShuffleBlockNotFound);
        assert.match(err.message, /needs the executorId \(an integer/);
        return true;
      },
    );
  }
  await assert.rejects(
    a.ask(FetchShuffleBlock({ ...block, executorId: '1' })),
    /No map outputs of executor 1 here/,
  );
  await assert.rejects(
    a.ask(FetchShuffleBlock({ ...block, mapId: 1 })),
    /No block shuffle_0_1_0 here/,
  );
  // Links planted in the application's folder are not followed.
  await assert.rejects(
    a.ask(FetchShuffleBlock({ ...block, mapId: 7 })),
    /No block shuffle_0_7_0 here/,
  );
  await assert.rejects(
    a.ask(FetchShuffleBlock({ ...block, executorId: '5' })),
    /No map outputs of executor 5 here: .* has no folder .*blockmgr-5/,
  );
  // An application none of whose executors ran here.
  const c = await fetcher(t, svc.address, appKey('app-20261203000000-0003'));
  await assert.rejects(
    c.ask(FetchShuffleBlock(block)),
    /no map outputs of application app-20261203000000-0003/,
  );
  // And it serves on.
  assert.equal(text(await a.ask(FetchShuffleBlock({ ...block, offset: 1, length: 2 }))), 'AA');
});

test('with authentication off, the appId named says whose blocks, and is required', async (t) => {
  const svc = await service(t, undefined);
  const anyone = await fetcher(t, svc.address, undefined);
  await assert.rejects(anyone.ask(FetchShuffleBlock(block)), (err: Error & { code?: number }) => {
    assert.equal(err.code, RpcErrorCode.InvalidParams);
    assert.match(
      err.message,
      /With authentication off, a worker's shuffle service needs the appId/,
    );
    return true;
  });
  assert.equal(text(await anyone.ask(FetchShuffleBlock({ ...block, appId: B }))), 'BBBBBB');
});
