import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lastLines, readLogTail } from '../../backend/logs/logTail.js';

const limits = { maxLines: 3, maxBytes: 100 };
const APP = 'app-20261207000000-0000';
const STDERR = { appId: APP, execId: 0, stream: 'stderr' } as const;
const header = `Wick Executor Command: "node" "x.js"\n${'='.repeat(40)}\n\n`;

test('the last lines, without the command header and blank lines', () => {
  assert.equal(lastLines(`${header}a\n\nb\n`, limits), 'a\nb');
  assert.equal(lastLines(`${header}1\n2\n3\n4\n5\n`, limits), '3\n4\n5');
  assert.equal(lastLines(header, limits), '');
});

test('lines are dropped from the front to stay within the bytes; one long line keeps its end', () => {
  const long = 'y'.repeat(60);
  assert.equal(lastLines(`${long}\n${long}\nend\n`, limits), `${long}\nend`);
  const huge = `${'z'.repeat(300)}ERROR at the end`;
  const out = lastLines(`${huge}\n`, limits);
  assert.ok(out.startsWith('…'));
  assert.ok(out.endsWith('ERROR at the end'));
  assert.ok(Buffer.byteLength(out) <= 100 + 3);
});

test('a tail that starts mid-file drops its partial first line', () => {
  assert.equal(lastLines('rtial\nwhole\n', limits, true), 'whole');
});

test('readLogTail reads the end of a big file, and gives "" for a missing one', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'wick-tail-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, APP, '0');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'stderr');
  const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`);
  writeFileSync(path, `${header}${lines.join('\n')}\n`);
  assert.equal(await readLogTail(root, STDERR, limits), 'line 9997\nline 9998\nline 9999');
  assert.equal(await readLogTail(root, { ...STDERR, execId: 1 }, limits), '');
});

test('Node’s native stack trace after a fatal error is left out, so the error itself stays in the tail', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'wick-tail-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, APP, '0');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'stderr');
  const frames = Array.from(
    { length: 20 },
    (_, i) =>
      ` ${i + 1}: 0x10ea6aa v8::internal::HeapAllocator::AllocateRawWithRetryOrFailSlowPath(int, v8::internal::AllocationType, v8::internal::AllocationOrigin, v8::internal::AllocationAlignment) [node]`,
  );
  const fatal =
    'FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory';
  writeFileSync(
    path,
    `${header}INFO started\n<--- JS stacktrace --->\n\n${fatal}\n----- Native stack trace -----\n\n${frames.join('\n')}\n`,
  );
  assert.equal(
    await readLogTail(root, STDERR, { maxLines: 10, maxBytes: 2048 }),
    `INFO started\n<--- JS stacktrace --->\n${fatal}`,
  );
});
