/** The merged log's order: arrival, by whole lines, each tagged; bounded. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MergedLog, sourceTag } from '../../extension/logs/mergedLog.js';

const b = (s: string) => Buffer.from(s, 'utf8');

test('lines are placed in the order their newline arrives, each tagged with its source', () => {
  const m = new MergedLog();
  // Backlogs first, source by source.
  m.add('driver', b('starting\nPi job submitted\n'));
  m.add('exec 0', b('Running task 0\n'));
  // Then followed chunks, interleaved as they arrive.
  m.add('exec 1', b('Running task 1\nFinished ta'));
  m.add('exec 0', b('Finished task 0\n'));
  m.add('exec 1', b('sk 1\n'));
  m.add('driver', b('Pi is roughly 3.14\n'));
  assert.equal(
    m.text(),
    [
      '[driver] starting',
      '[driver] Pi job submitted',
      '[exec 0] Running task 0',
      '[exec 1] Running task 1',
      '[exec 0] Finished task 0',
      '[exec 1] Finished task 1',
      '[driver] Pi is roughly 3.14',
      '',
    ].join('\n'),
  );
});

test('an unfinished line waits for its newline, and never splits a character', () => {
  const m = new MergedLog();
  const pi = b('π ≈ 3.14\n');
  assert.equal(m.add('exec 0', pi.subarray(0, 1)), false, 'half of π: nothing yet');
  m.add('exec 1', b('other\n'));
  m.add('exec 0', pi.subarray(1));
  assert.equal(m.text(), '[exec 1] other\n[exec 0] π ≈ 3.14\n');
});

test('a source that ends flushes its last line, with how it ended', () => {
  const m = new MergedLog();
  m.add('exec 0 stderr', b('Error: boom\n    at f (/a.ts:7:11)'));
  m.add('driver', b('waiting\n'));
  assert.equal(m.end('exec 0 stderr', 'the process exited'), true);
  assert.equal(m.end('exec 0 stderr'), false, 'nothing more to flush');
  assert.equal(
    m.text(),
    '[exec 0 stderr] Error: boom\n[driver] waiting\n[exec 0 stderr]     at f (/a.ts:7:11)\n[exec 0 stderr] (the process exited)\n',
  );
});

test('CRLF lines lose their CR; past maxLines the oldest go, and the text says so', () => {
  const m = new MergedLog(3);
  m.add('driver', b('a\r\nb\r\nc\nd\ne\n'));
  assert.equal(m.lineCount, 3);
  assert.equal(
    m.text(),
    '[… 2 earlier lines dropped: the view keeps the last 3]\n[driver] c\n[driver] d\n[driver] e\n',
  );
});

test('tags name the driver or the executor, and stderr', () => {
  assert.equal(sourceTag({ driverId: 'driver-1' }, 'stdout'), 'driver');
  assert.equal(sourceTag({ execId: 0 }, 'stdout'), 'exec 0');
  assert.equal(sourceTag({ execId: 2 }, 'stderr'), 'exec 2 stderr');
});
