/**
 * The master's store of uploaded files, on a real folder: an upload is kept only whole and
 * right, out-of-order or oversized chunks are refused with what was expected, a peer that goes
 * leaves no partial file, and clean-up keeps what a driver names and what was just uploaded.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ContentStore } from '../../backend/files/ContentStore.js';
import { waitFor } from '../helpers/processes.js';

const root = mkdtempSync(join(tmpdir(), 'wick-test-store-'));
let n = 0;

after(() => rmSync(root, { recursive: true, force: true }));

function store(maxBytes = 1024 * 1024): ContentStore {
  return new ContentStore(join(root, `store-${++n}`), maxBytes);
}

function sha(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Uploads `data` in chunks of `chunk` bytes as `peer`; the replies, in order. */
async function upload(s: ContentStore, peer: string, data: Buffer, chunk: number) {
  const replies = [];
  for (let offset = 0; offset < data.length || offset === 0; offset += chunk) {
    replies.push(
      await s.write(peer, {
        sha256: sha(data),
        size: data.length,
        offset,
        data: data.subarray(offset, offset + chunk),
      }),
    );
    if (data.length === 0) break;
  }
  return replies;
}

const partials = (s: ContentStore) =>
  existsSync(s.dir) ? readdirSync(s.dir).filter((f) => f.startsWith('.upload-')) : [];

test('a chunked upload is kept under its SHA-256 once its last chunk is in, and not before', async () => {
  const s = store();
  const data = Buffer.from('x'.repeat(2500));
  const first = await s.write('peer-a', {
    sha256: sha(data),
    size: data.length,
    offset: 0,
    data: data.subarray(0, 1000),
  });
  assert.deepEqual(first, { received: 1000, complete: false });
  assert.equal(await s.has(sha(data)), false, 'not kept while partial');
  assert.deepEqual(await s.missing([{ path: 'a', sha256: sha(data), size: data.length }]), [
    sha(data),
  ]);
  const rest = [];
  for (const offset of [1000, 2000]) {
    rest.push(
      await s.write('peer-a', {
        sha256: sha(data),
        size: data.length,
        offset,
        data: data.subarray(offset, offset + 1000),
      }),
    );
  }
  assert.deepEqual(rest, [
    { received: 2000, complete: false },
    { received: 2500, complete: true },
  ]);
  assert.equal(await s.has(sha(data)), true);
  assert.deepEqual(readFileSync(s.path(sha(data))), data);
  assert.deepEqual(partials(s), []);
  // Two paths of the same content are asked for once; what is here is not asked for.
  const other = Buffer.from('other');
  assert.deepEqual(
    await s.missing([
      { path: 'a', sha256: sha(data), size: data.length },
      { path: 'b', sha256: sha(other), size: other.length },
      { path: 'c', sha256: sha(other), size: other.length },
    ]),
    [sha(other)],
  );
  // An empty file is one chunk.
  assert.deepEqual(await upload(s, 'peer-a', Buffer.alloc(0), 10), [
    { received: 0, complete: true },
  ]);
  assert.equal(await s.has(sha('')), true);
});

test('a chunk that does not continue the upload where it stopped is refused with the offset expected', async () => {
  const s = store();
  const data = Buffer.from('0123456789');
  const chunk = (offset: number, len = 4) => ({
    sha256: sha(data),
    size: data.length,
    offset,
    data: data.subarray(offset, offset + len),
  });
  await assert.rejects(
    s.write('peer-a', chunk(4)),
    new RegExp(`^Error: No upload of ${sha(data)} under way: start it at offset 0$`),
  );
  await s.write('peer-a', chunk(0));
  await assert.rejects(
    s.write('peer-a', chunk(6)),
    new RegExp(`^Error: Upload of ${sha(data)} expected offset 4, got 6$`),
  );
  // Another peer's upload of the same file is its own.
  await assert.rejects(s.write('peer-b', chunk(4)), /No upload of \S+ under way/);
  // The refused chunk changed nothing: the upload goes on where it was.
  await s.write('peer-a', chunk(4));
  assert.deepEqual(await s.write('peer-a', chunk(8)), { received: 10, complete: true });
  assert.deepEqual(readFileSync(s.path(sha(data))), data);
  // More bytes than announced are refused, and the upload dropped.
  const big = { sha256: sha('abc'), size: 3, offset: 0, data: Buffer.from('abcd') };
  await assert.rejects(s.write('peer-a', big), /has more than its 3 bytes/);
  await waitFor('the partial file to go', () => partials(s).length === 0, 5_000);
});

test('an upload whose bytes do not match its SHA-256 is refused and nothing of it is kept', async () => {
  const s = store();
  const claimed = sha('what the peer said');
  const data = Buffer.from('what the peer sent');
  await assert.rejects(
    s.write('peer-a', { sha256: claimed, size: data.length, offset: 0, data }),
    new RegExp(
      `^Error: Uploaded file does not match its SHA-256: expected ${claimed}, got ${sha(data)}$`,
    ),
  );
  assert.equal(await s.has(claimed), false);
  assert.equal(await s.has(sha(data)), false);
  assert.deepEqual(readdirSync(s.dir), []);
});

test('a file or a submission over maxBytes is refused naming wick.master.upload.maxSize', async () => {
  const s = store(100);
  await assert.rejects(
    s.write('peer-a', { sha256: sha('x'), size: 101, offset: 0, data: Buffer.from('x') }),
    new RegExp(
      `^Error: File ${sha('x')} is 101 bytes, more than wick\\.master\\.upload\\.maxSize \\(100 bytes\\)$`,
    ),
  );
  assert.equal(existsSync(s.dir), false, 'nothing was written');
  // Files of 60 bytes each, twice the same content counted once: 60 fits, 120 does not.
  const f = (path: string, content: string) => ({ path, sha256: sha(content), size: 60 });
  assert.equal((await s.missing([f('a', 'one'), f('b', 'one')])).length, 1);
  await assert.rejects(
    s.missing([f('a', 'one'), f('b', 'two')]),
    /^Error: The application's files are 120 bytes, more than this master keeps for one submission \(wick\.master\.upload\.maxSize = 100 bytes\)/,
  );
});

test('peerGone drops the partial uploads of that peer and only of it', async () => {
  const s = store();
  const a = Buffer.from('a'.repeat(100));
  const b = Buffer.from('b'.repeat(100));
  const start = (peer: string, data: Buffer) =>
    s.write(peer, { sha256: sha(data), size: 100, offset: 0, data: data.subarray(0, 50) });
  await start('peer-a', a);
  await start('peer-b', b);
  assert.equal(partials(s).length, 2);
  s.peerGone('peer-a');
  await waitFor('peer-a’s partial file to go', () => partials(s).length === 1, 5_000);
  await assert.rejects(
    s.write('peer-a', { sha256: sha(a), size: 100, offset: 50, data: a.subarray(50) }),
    /No upload of \S+ under way: start it at offset 0/,
  );
  // peer-b's upload is untouched.
  assert.deepEqual(
    await s.write('peer-b', { sha256: sha(b), size: 100, offset: 50, data: b.subarray(50) }),
    { received: 100, complete: true },
  );
  assert.equal(await s.has(sha(b)), true);
  assert.equal(await s.has(sha(a)), false);
});

test('removeAllBut removes the old files no one names, and keeps the named and the recent ones', async () => {
  const s = store();
  const contents = ['kept by a driver', 'unused and old', 'just uploaded'];
  for (const c of contents) await upload(s, 'peer-a', Buffer.from(c), 1024);
  const [named, old, recent] = contents.map((c) => sha(c)) as [string, string, string];
  const hourAgo = new Date(Date.now() - 3600_000);
  for (const h of [named, old]) utimesSync(s.path(h), hourAgo, hourAgo);
  // A partial upload is no file of the store's: clean-up leaves it to its upload.
  await s.write('peer-a', { sha256: sha('partial'), size: 7, offset: 0, data: Buffer.from('par') });

  assert.equal(await s.removeAllBut(new Set([named]), 10 * 60_000), 1);
  assert.equal(await s.has(named), true);
  assert.equal(await s.has(old), false);
  assert.equal(await s.has(recent), true);
  assert.equal(partials(s).length, 1);
  // Nothing named, everything old: all go. A store never written to removes nothing.
  assert.equal(await s.removeAllBut(new Set(), 0, Date.now() + 1000), 2);
  assert.equal(await store().removeAllBut(new Set(), 0), 0);
});
