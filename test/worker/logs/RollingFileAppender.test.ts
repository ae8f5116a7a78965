/**
 * RollingFileAppender in this process, against real files: size rolling splits a chunk so that no
 * file passes maxSize and every byte lands once; time rolling rolls on the first write after each
 * interval (a clock the test moves), with Spark's names; maxRetainedFiles deletes the oldest and
 * counts their bytes; compressed files are swapped in whole; and a log read through logSet.ts is
 * the bytes written, by offsets over the whole log, while a follower follows across the rolls.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { openLogSet, readLogSetRange } from '../../../backend/logs/logSet.js';
import { sortRolledOver } from '../../../backend/logs/rolledFiles.js';
import { type FollowSink, LogFollower } from '../../../backend/worker/logs/LogFollower.js';
import { RollingFileAppender } from '../../../backend/worker/logs/RollingFileAppender.js';

const DRIVER = 'driver-20261207000000-0000';
const SOURCE = { driverId: DRIVER, stream: 'stdout' } as const;
const SIZE = 81_920;

function logDir(t: TestContext): { root: string; dir: string } {
  const root = mkdtempSync(join(tmpdir(), 'wick-rolling-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, DRIVER);
  mkdirSync(dir);
  return { root, dir };
}

/** Bytes that differ from offset to offset, so that a byte in a wrong place cannot match. */
function pattern(from: number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = ((from + i) * 2654435761) >>> 24;
  return b;
}

function rolledIn(dir: string): string[] {
  return sortRolledOver(readdirSync(dir), 'stdout');
}

test('size: no file passes maxSize, chunks are split, every byte lands once', async (t) => {
  const { root, dir } = logDir(t);
  const a = new RollingFileAppender(
    dir,
    'stdout',
    { strategy: { kind: 'size', maxBytes: SIZE }, maxRetainedFiles: -1, compress: false },
    false,
  );
  let total = 0;
  for (const n of [1, 70_000, 30_000, 200_000, 5, SIZE, 3]) {
    a.write(pattern(total, n));
    total += n;
  }
  await a.close();
  const rolled = rolledIn(dir);
  assert.equal(rolled.length, Math.floor(total / SIZE));
  for (const name of rolled) assert.equal(statSync(join(dir, name)).size, SIZE, name);
  const all = Buffer.concat([...rolled, 'stdout'].map((f) => readFileSync(join(dir, f))));
  assert.ok(all.equals(pattern(0, total)));
  const r = await readLogSetRange(root, SOURCE, SIZE - 10, 20);
  assert.deepEqual([r.offset, r.totalSize], [SIZE - 10, total]);
  assert.ok(r.data.equals(pattern(SIZE - 10, 20)));
});

test("time: the first write after each interval rolls, named with Spark's pattern", async (t) => {
  const { dir } = logDir(t);
  let now = new Date(2026, 11, 7, 10, 0, 30).getTime();
  const a = new RollingFileAppender(
    dir,
    'stdout',
    {
      strategy: { kind: 'time', intervalMs: 60_000, pattern: 'minute' },
      maxRetainedFiles: -1,
      compress: false,
    },
    false,
    () => now,
  );
  a.write('a\n');
  now += 20_000; // 10:00:50, same interval
  a.write('b\n');
  now += 20_000; // 10:01:10: past 10:01:00
  a.write('c\n');
  now += 120_000; // 10:03:10
  a.write('d\n');
  await a.close();
  assert.deepEqual(rolledIn(dir), ['stdout--2026-12-07--10-01', 'stdout--2026-12-07--10-03']);
  assert.equal(readFileSync(join(dir, 'stdout--2026-12-07--10-01'), 'utf8'), 'a\nb\n');
  assert.equal(readFileSync(join(dir, 'stdout--2026-12-07--10-03'), 'utf8'), 'c\n');
  assert.equal(readFileSync(join(dir, 'stdout'), 'utf8'), 'd\n');
});

test('maxRetainedFiles and compression: the newest kept as .gz, deleted bytes still counted', async (t) => {
  const { root, dir } = logDir(t);
  const a = new RollingFileAppender(
    dir,
    'stdout',
    { strategy: { kind: 'size', maxBytes: SIZE }, maxRetainedFiles: 3, compress: true },
    false,
  );
  const total = SIZE * 7 + 123;
  for (let at = 0; at < total; at += 10_000) a.write(pattern(at, Math.min(10_000, total - at)));
  await a.close();
  const rolled = rolledIn(dir);
  assert.equal(rolled.length, 3);
  for (const name of rolled) assert.match(name, /\.gz$/);
  const removed = total - 123 - 3 * SIZE;
  assert.equal(readFileSync(join(dir, '.stdout-removed-bytes'), 'utf8'), String(removed));
  const kept = Buffer.concat([
    ...rolled.map((f) => gunzipSync(readFileSync(join(dir, f)))),
    readFileSync(join(dir, 'stdout')),
  ]);
  assert.ok(kept.equals(pattern(removed, total - removed)));
  // From offset 0 (deleted): from the first byte kept, at its own offset.
  const r = await readLogSetRange(root, SOURCE, 0, 100);
  assert.deepEqual([r.offset, r.totalSize], [removed, total]);
  assert.ok(r.data.equals(pattern(removed, 100)));
  const across = await readLogSetRange(root, SOURCE, removed + SIZE - 7, 50);
  assert.ok(across.data.equals(pattern(removed + SIZE - 7, 50)));
});

test('a follower follows across rolls and compressions: every byte once, in order', async (t) => {
  const { root, dir } = logDir(t);
  const a = new RollingFileAppender(
    dir,
    'stdout',
    { strategy: { kind: 'size', maxBytes: SIZE }, maxRetainedFiles: -1, compress: true },
    false,
  );
  const got: Buffer[] = [];
  let next = 0;
  const problems: string[] = [];
  let ended = false;
  let done = false;
  const sink: FollowSink = {
    chunk(offset, data) {
      if (offset !== next) problems.push(`chunk at ${offset}, expected ${next}`);
      got.push(Buffer.from(data));
      next = offset + data.length;
    },
    end() {
      ended = true;
    },
    ready: () => true,
    drained: () => Promise.resolve(),
  };
  const f = new LogFollower(await openLogSet(root, SOURCE), root, SOURCE, 0, sink, () => done);
  t.after(() => f.stop('test over'));
  await f.start();
  const total = SIZE * 10 + 77;
  for (let at = 0; at < total; at += 7_000) {
    a.write(pattern(at, Math.min(7_000, total - at)));
    f.poke();
    // Let the follower read now and then, so that it reads across rolls as they happen.
    if ((at / 7_000) % 5 === 0) await new Promise((r) => setImmediate(r));
  }
  await a.close();
  done = true;
  f.poke();
  while (!ended) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(problems, []);
  assert.equal(next, total);
  assert.ok(Buffer.concat(got).equals(pattern(0, total)));
  assert.ok(rolledIn(dir).length >= 10);
});

// ci-i: `wick logs -f` ended after the first file once. Its follow opened the log before the
// writer began; the writer rolled ten times and exited before the follower looked again; the
// appender, closed, forgot the log, and a per-log count read 0 again, "no roll since you opened".
test('a follower that looks only after the appender rolled and closed still reads every byte', async (t) => {
  const { root, dir } = logDir(t);
  const a = new RollingFileAppender(
    dir,
    'stdout',
    { strategy: { kind: 'size', maxBytes: SIZE }, maxRetainedFiles: -1, compress: false },
    false,
  );
  const got: Buffer[] = [];
  let ended: string | undefined;
  const sink: FollowSink = {
    chunk(_offset, data) {
      got.push(Buffer.from(data));
    },
    end(_total, reason) {
      ended = reason;
    },
    ready: () => true,
    drained: () => Promise.resolve(),
  };
  const f = new LogFollower(await openLogSet(root, SOURCE), root, SOURCE, 0, sink, () => true);
  t.after(() => f.stop('test over'));
  const total = SIZE * 10 + 77;
  a.write(pattern(0, total));
  await a.close();
  assert.ok(rolledIn(dir).length >= 10, 'the writer rolled before the follower looked');
  await f.start();
  while (ended === undefined) await new Promise((r) => setTimeout(r, 20));
  assert.equal(ended, 'process exited');
  assert.equal(Buffer.concat(got).length, total, 'bytes followed');
  assert.ok(Buffer.concat(got).equals(pattern(0, total)));
});
