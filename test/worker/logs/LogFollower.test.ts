/**
 * LogFollower on its own, with a sink in this process: appends of sizes on both sides of its read
 * size arrive as contiguous chunks whose bytes are the file's, although it reads every chunk into
 * the same buffer; a receiver that is behind holds reading back; and a done source ends the follow
 * once drained.
 */
import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { openLogSet } from '../../../backend/logs/logSet.js';
import { type FollowSink, LogFollower } from '../../../backend/worker/logs/LogFollower.js';

const DRIVER = 'driver-20261207000000-0000';
const SOURCE = { driverId: DRIVER, stream: 'stdout' } as const;

/** A follower of the log at `path`, opened as the worker's follow opens it. */
async function followerOf(path: string, offset: number, sink: FollowSink, done: () => boolean) {
  const workDir = join(path, '..', '..');
  return new LogFollower(await openLogSet(workDir, SOURCE), workDir, SOURCE, offset, sink, done);
}

const MiB = 1024 * 1024;

/** A sink that keeps copies of what it is handed and checks offsets as they come. */
class KeepingSink implements FollowSink {
  readonly chunks: { offset: number; data: Buffer; view: Buffer }[] = [];
  readonly problems: string[] = [];
  next = 0;
  ended: { totalSize: number; reason: string } | undefined;
  behind = false;
  /** How many times the follower asked to be told when the receiver has caught up. */
  drainAsks = 0;
  private release: (() => void) | undefined;
  private wake: (() => void) | undefined;

  chunk(offset: number, data: Buffer): void {
    if (this.behind) this.problems.push(`chunk at ${offset} while the receiver is behind`);
    if (offset !== this.next) this.problems.push(`chunk at ${offset}, expected ${this.next}`);
    if (data.length === 0) this.problems.push(`empty chunk at ${offset}`);
    this.chunks.push({ offset, data: Buffer.from(data), view: data });
    this.next = offset + data.length;
    this.wake?.();
  }

  end(totalSize: number, reason: string): void {
    this.ended = { totalSize, reason };
    this.wake?.();
  }

  ready(): boolean {
    return !this.behind;
  }

  drained(): Promise<void> {
    this.drainAsks++;
    this.wake?.();
    return new Promise((r) => {
      this.release = r;
    });
  }

  catchUp(): void {
    this.behind = false;
    this.release?.();
  }

  async until(done: () => boolean): Promise<void> {
    while (!done()) {
      await new Promise<void>((r) => {
        this.wake = r;
        // fs.watch may coalesce events; the follower's slow re-check covers it, this keeps it quick.
        setTimeout(r, 50);
      });
    }
  }
}

function logFile(t: TestContext): string {
  const root = mkdtempSync(join(tmpdir(), 'wick-follower-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, DRIVER));
  const path = join(root, DRIVER, 'stdout');
  writeFileSync(path, '');
  return path;
}

/** Bytes that differ from offset to offset, so that a chunk at a wrong place cannot match. */
function pattern(from: number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = ((from + i) * 2654435761) >>> 24;
  return b;
}

test('appends around the read size arrive whole and in order, though one buffer is reused', async (t) => {
  const path = logFile(t);
  const sink = new KeepingSink();
  let done = false;
  const follower = await followerOf(path, 0, sink, () => done);
  t.after(() => follower.stop('test over'));
  await follower.start();
  const sizes = [1, MiB - 1, MiB, MiB + 1, 3 * MiB + 7, 17, 2 * MiB];
  let total = 0;
  for (const n of sizes) {
    appendFileSync(path, pattern(total, n));
    total += n;
    follower.poke();
    await sink.until(() => sink.next === total);
  }
  done = true;
  follower.poke();
  await sink.until(() => sink.ended !== undefined);

  assert.deepEqual(sink.problems, []);
  assert.deepEqual(sink.ended, { totalSize: total, reason: 'process exited' });
  assert.ok(Math.max(...sink.chunks.map((c) => c.data.length)) <= MiB, 'reads of at most 1 MiB');
  const file = readFileSync(path);
  assert.equal(file.length, total);
  for (const c of sink.chunks) {
    assert.ok(c.data.equals(file.subarray(c.offset, c.offset + c.data.length)), `at ${c.offset}`);
  }
  assert.ok(Buffer.concat(sink.chunks.map((c) => c.data)).equals(file));
  // The views handed over share one buffer: what a sink does not copy is overwritten.
  const buffers = new Set(sink.chunks.map((c) => c.view.buffer));
  assert.equal(buffers.size, 1, 'one read buffer for the whole follow');
});

test('a receiver that is behind holds reading back until it catches up', async (t) => {
  const path = logFile(t);
  const sink = new KeepingSink();
  const follower = await followerOf(path, 0, sink, () => true);
  t.after(() => follower.stop('test over'));
  sink.behind = true;
  appendFileSync(path, pattern(0, 5000));
  await follower.start();
  // The follower has come to read, seen the receiver behind and waits for it (or, wrongly, read).
  await sink.until(() => sink.drainAsks > 0 || sink.chunks.length > 0 || sink.ended !== undefined);
  assert.equal(sink.drainAsks, 1, 'it waits for the receiver');
  assert.equal(sink.chunks.length, 0, 'nothing read while behind');
  assert.equal(sink.ended, undefined, 'and not ended either: bytes are still unread');
  sink.catchUp();
  await sink.until(() => sink.ended !== undefined);
  assert.deepEqual(sink.problems, []);
  assert.equal(sink.next, 5000);
  assert.deepEqual(sink.ended, { totalSize: 5000, reason: 'process exited' });
});

test('a follow from an offset starts there; stop() ends it with the reason given', async (t) => {
  const path = logFile(t);
  appendFileSync(path, pattern(0, 300));
  const sink = new KeepingSink();
  sink.next = 100;
  const follower = await followerOf(path, 100, sink, () => false);
  await follower.start();
  await sink.until(() => sink.next === 300);
  follower.stop('stopped by the follower');
  assert.deepEqual(sink.problems, []);
  assert.ok(sink.chunks[0]?.data.equals(pattern(100, 200)));
  assert.deepEqual(sink.ended, { totalSize: 300, reason: 'stopped by the follower' });
});
