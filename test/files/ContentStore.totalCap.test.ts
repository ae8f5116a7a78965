/**
 * wick.master.upload.maxTotalSize (issue 28, finding 6: 20 files just under maxSize were all
 * kept): a master's ContentStore keeps at most maxTotalBytes in all, files kept and uploads under
 * way, and refuses what would pass it naming the setting — whether a peer asks what is missing
 * first or uploads straight away — and has room again once unneeded files are removed.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ContentStore } from '../../backend/files/ContentStore.js';

const root = mkdtempSync(join(tmpdir(), 'wick-test-store-cap-'));
after(() => rmSync(root, { recursive: true, force: true }));

function file(size: number) {
  const data = randomBytes(size);
  return { data, sha256: createHash('sha256').update(data).digest('hex'), size };
}

async function upload(store: ContentStore, peer: string, f: ReturnType<typeof file>) {
  return store.write(peer, { sha256: f.sha256, size: f.size, offset: 0, data: f.data });
}

test('files each under maxSize are refused past maxTotalSize, naming it', async () => {
  const store = new ContentStore(join(root, 'a'), 100, 250);
  const files = Array.from({ length: 20 }, () => file(99));
  assert.deepEqual(await upload(store, 'p1', files[0] as never), { received: 99, complete: true });
  assert.deepEqual(await upload(store, 'p2', files[1] as never), { received: 99, complete: true });
  assert.equal(await store.usedBytes(), 198);
  // Straight to the upload, and through RequestMissingFiles' check: both refused.
  await assert.rejects(
    upload(store, 'p3', files[2] as never),
    /would take this master's uploaded files to 297 bytes, more than it keeps in all \(wick\.master\.upload\.maxTotalSize = 250 bytes; 198 kept now\)/,
  );
  await assert.rejects(
    store.missing([{ sha256: files[3]?.sha256 as string, size: 99, name: 'x' } as never]),
    /wick\.master\.upload\.maxTotalSize = 250 bytes/,
  );
  // A file already kept costs nothing more.
  assert.deepEqual(
    await store.missing([{ sha256: files[0]?.sha256 as string, size: 99, name: 'x' } as never]),
    [],
  );
  // An upload under way holds its whole size: a second one may not squeeze past the cap.
  const big = file(50);
  await store.write('p4', {
    sha256: big.sha256,
    size: 50,
    offset: 0,
    data: big.data.subarray(0, 10),
  });
  assert.equal(await store.usedBytes(), 248);
  await assert.rejects(upload(store, 'p5', file(3)), /maxTotalSize/);
  store.peerGone('p4');
  assert.equal(await store.usedBytes(), 198);
  // Once no driver needs them, the files go and there is room again.
  assert.equal(await store.removeAllBut(new Set(), 0, Date.now() + 1000), 2);
  assert.equal(await store.usedBytes(), 0);
  assert.deepEqual(await upload(store, 'p6', files[2] as never), { received: 99, complete: true });
});

test('a master restarted on a full folder counts what it kept before', async () => {
  const dir = join(root, 'b');
  const first = new ContentStore(dir, 100, 150);
  await upload(first, 'p', file(90));
  const restarted = new ContentStore(dir, 100, 150);
  assert.equal(await restarted.usedBytes(), 90);
  await assert.rejects(upload(restarted, 'p', file(90)), /maxTotalSize = 150 bytes; 90 kept now/);
});
