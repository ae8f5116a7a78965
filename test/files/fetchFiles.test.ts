/**
 * The file server and its fetchers between two real RpcEnvs of this process, as a driver and an
 * executor use them: what arrives is what was offered, a file held by several paths travels
 * once, and a fetcher refuses what a peer could use against it (a path out of its folder, a file
 * that is not what its hash says) before it keeps anything.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { describeFiles } from '../../backend/files/describeFiles.js';
import { FileServer } from '../../backend/files/FileServer.js';
import { fetchFiles, fetchOnce } from '../../backend/files/fetchFiles.js';
import { FILE_SERVER_ENDPOINT } from '../../backend/protocol/endpoints.js';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import type { ShippedFile } from '../../backend/protocol/files.js';
import { type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { testProtocol } from '../helpers/protocol.js';
import { rpcError } from '../helpers/rpcAsserts.js';

let serverEnv: RpcEnv;
let fetcherEnv: RpcEnv;
let server: FileServer;
let ref: RpcEndpointRef;
const dir = mkdtempSync(join(tmpdir(), 'wick-test-files-'));
const src = join(dir, 'src');

before(async () => {
  serverEnv = await RpcEnv.create({ protocol: testProtocol, name: 'testFileServer' });
  fetcherEnv = await RpcEnv.create({
    protocol: testProtocol,
    name: 'testFetcher',
    clientMode: true,
  });
  server = new FileServer();
  const address = serverEnv.setupEndpoint(FILE_SERVER_ENDPOINT, server).address;
  ref = await fetcherEnv.setupEndpointRef(address, FILE_SERVER_ENDPOINT);
  mkdirSync(src);
});

after(async () => {
  await fetcherEnv?.stop();
  await serverEnv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes files under src/, offers them, and returns what travels for them. */
async function offered(files: Record<string, string | Buffer>): Promise<ShippedFile[]> {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(src, path, '..'), { recursive: true });
    writeFileSync(join(src, path), content);
  }
  const described = await describeFiles(src, Object.keys(files));
  for (const f of described) server.offer(f.sha256, join(src, f.path));
  return described;
}

/** `ref`, counting the FetchFileChunk asks made through it. */
function counting(): { ref: RpcEndpointRef; asks: () => number } {
  let n = 0;
  const proxy = new Proxy(ref, {
    get(target, prop) {
      if (prop === 'ask') {
        return (...args: Parameters<RpcEndpointRef['ask']>) => {
          n++;
          return target.ask(...args);
        };
      }
      return Reflect.get(target, prop, target);
    },
  });
  return { ref: proxy, asks: () => n };
}

function fresh(name: string): string {
  const d = join(dir, name);
  mkdirSync(d);
  return d;
}

test('fetched files are the offered bytes at their paths, in chunks, with their executable bit', async () => {
  const big = Buffer.alloc(100_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251;
  const files = await offered({
    'app.mjs': 'export const x = 1;\n',
    'lib/deep/util.mjs': 'export const y = 2;\n',
    'data.bin': big,
    'empty.txt': '',
  });
  writeFileSync(join(src, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  const [script] = await describeFiles(src, ['run.sh']);
  assert.equal(script?.executable, true);
  server.offer(script.sha256, join(src, 'run.sh'));
  files.push(script);

  const dest = fresh('fetched');
  const { ref: r, asks } = counting();
  const stats = await fetchFiles(r, files, dest, { chunkBytes: 16_384 });
  assert.deepEqual(stats, { files: 5, bytes: files.reduce((n, f) => n + f.size, 0) });
  for (const f of files) {
    assert.deepEqual(readFileSync(join(dest, f.path)), readFileSync(join(src, f.path)), f.path);
  }
  assert.equal(statSync(join(dest, 'run.sh')).mode & 0o111, 0o111, 'run.sh stays executable');
  assert.equal(statSync(join(dest, 'app.mjs')).mode & 0o111, 0);
  // 100,000 bytes in chunks of 16 KiB are 7 asks; each small file one; the empty one none.
  assert.equal(asks(), 7 + 3);
});

test('a file held by several paths is fetched once and copied to each', async () => {
  const same = 'the same bytes under three names\n';
  const files = await offered({ 'a/LICENSE': same, 'b/LICENSE': same, 'c/x/LICENSE': same });
  assert.equal(new Set(files.map((f) => f.sha256)).size, 1);
  const dest = fresh('dedup');
  const { ref: r, asks } = counting();
  const stats = await fetchFiles(r, files, dest);
  assert.equal(asks(), 1);
  assert.deepEqual(stats, { files: 3, bytes: Buffer.byteLength(same) });
  for (const f of files) assert.equal(readFileSync(join(dest, f.path), 'utf8'), same);
});

test('a file the server does not offer is refused with FileNotOffered', async () => {
  const sha = createHash('sha256').update('never offered').digest('hex');
  await assert.rejects(
    fetchFiles(ref, [{ path: 'x.txt', sha256: sha, size: 13 }], fresh('not-offered')),
    rpcError(RpcErrorCode.FileNotOffered, `No file with SHA-256 ${sha} is offered here`),
  );
  assert.equal(RpcErrorCode.FileNotOffered, -32020);
});

test('a path that would leave the folder is refused before anything is fetched', async () => {
  const [good] = await offered({ 'good.txt': 'fine\n' });
  const dest = fresh('escape');
  for (const bad of ['../outside.txt', 'a/../../outside.txt', '/etc/passwd', 'a//b', './x']) {
    const { ref: r, asks } = counting();
    await assert.rejects(
      fetchFiles(r, [good as ShippedFile, { ...(good as ShippedFile), path: bad }], dest),
      (err: Error) => {
        assert.match(err.message, /^Refusing shipped file path "/);
        assert.ok(err.message.includes(`"${bad}"`), err.message);
        return true;
      },
    );
    assert.equal(asks(), 0, `nothing fetched for ${bad}`);
  }
  assert.deepEqual(readdirSync(dest), []);
  assert.equal(existsSync(join(dir, 'outside.txt')), false);
});

test('a file whose bytes no longer match its SHA-256 is refused, naming it, and not kept', async () => {
  const [f] = await offered({ 'changed.txt': 'original content\n' });
  // Same size, other bytes: only the hash can tell.
  writeFileSync(join(src, 'changed.txt'), 'ORIGINAL CONTENT\n');
  const dest = fresh('changed');
  await assert.rejects(fetchFiles(ref, [f as ShippedFile], dest), (err: Error) => {
    assert.equal(
      err.message,
      `changed.txt fetched from ${ref.address} does not match its SHA-256: expected ${f?.sha256}, got ${createHash('sha256').update('ORIGINAL CONTENT\n').digest('hex')}`,
    );
    return true;
  });
  assert.equal(existsSync(join(dest, 'changed.txt')), false, 'the bad copy is removed');

  // Another size: refused as changed, naming it too.
  writeFileSync(join(src, 'changed.txt'), 'short\n');
  await assert.rejects(
    fetchFiles(ref, [f as ShippedFile], fresh('shorter')),
    new RegExp(
      `^Error: changed\\.txt changed on ${ref.address.replace(/\./g, '\\.')} while it was fetched: expected ${f?.size} bytes, it has 6$`,
    ),
  );
});

test('fetchOnce: two callers at once get the same folder, fetched once (the other waits on the lock)', async () => {
  const files = await offered({
    'once/a.mjs': 'export default 1;\n',
    'once/b.mjs': 'export default 2;\n',
  });
  const local = fresh('local');
  let fetches = 0;
  const fetch = async (into: string) => {
    fetches++;
    return fetchFiles(ref, files, into);
  };
  const [one, two] = await Promise.all([
    fetchOnce(local, 'code-1', fetch),
    fetchOnce(local, 'code-1', fetch),
  ]);
  assert.equal(one.path, join(local, 'code-1'));
  assert.equal(two.path, one.path);
  assert.equal([one, two].filter((r) => r.fetched).length, 1, JSON.stringify([one, two]));
  assert.equal(fetches, 1, 'the second caller waited for the first one’s fetch');
  for (const f of files) {
    assert.equal(
      readFileSync(join(one.path, f.path), 'utf8'),
      readFileSync(join(src, f.path), 'utf8'),
    );
  }
  // No partial folder, nor the lock, is left beside it.
  assert.deepEqual(readdirSync(local), ['code-1']);

  // A later caller finds it and fetches nothing.
  const before = fetches;
  const three = await fetchOnce(local, 'code-1', fetch);
  assert.deepEqual(three, { path: one.path });
  assert.equal(fetches, before);
});

test('fetchOnce: a lock left by a process that is gone is taken over', async () => {
  const local = fresh('local-stale');
  const child = spawnSync(process.execPath, ['-e', '0']);
  writeFileSync(join(local, '.code-3.lock'), String(child.pid));
  const files = await offered({ 'stale.mjs': 'export default 4;\n' });
  const r = await fetchOnce(local, 'code-3', (into) => fetchFiles(ref, files, into));
  assert.ok(r.fetched);
  assert.deepEqual(readdirSync(local), ['code-3']);
});

test('fetchOnce: a failed fetch leaves nothing, and the next caller fetches again', async () => {
  const local = fresh('local-fail');
  await assert.rejects(
    fetchOnce(local, 'code-2', async () => {
      throw new Error('the driver went away');
    }),
    /the driver went away/,
  );
  assert.deepEqual(readdirSync(local), []);
  const files = await offered({ 'retry.mjs': 'export default 3;\n' });
  const r = await fetchOnce(local, 'code-2', (into) => fetchFiles(ref, files, into));
  assert.deepEqual(r.fetched, { files: 1, bytes: files[0]?.size });
  assert.deepEqual(readdirSync(local), ['code-2']);
});
