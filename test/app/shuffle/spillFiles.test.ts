/**
 * Temporary shuffle files: records read back a small chunk at a time across multi-byte
 * characters, a truncated file detected, and a task's leftovers removed by its id alone.
 */
import assert from 'node:assert/strict';
import { fstatSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import {
  RecordFileReader,
  RecordFileWriter,
  readRecordFile,
  removeTaskTempFiles,
  tempFile,
} from '../../../backend/app/shuffle/spillFiles.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-spillfiles-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('records written come back in order, read in chunks of any size', () => {
  fc.assert(
    fc.property(
      fc.array(fc.jsonValue(), { maxLength: 60 }),
      fc.integer({ min: 1, max: 64 }),
      (records, chunk) => {
        const w = new RecordFileWriter(tempFile(dir, 'sort', 1), 17);
        for (const r of records) w.write(JSON.stringify(r));
        w.close();
        const back: unknown[] = [];
        const r = new RecordFileReader(w.path, 0, Number.POSITIVE_INFINITY, chunk);
        r.readAll((x) => back.push(x));
        r.close();
        rmSync(w.path);
        // JSON.stringify(-0) is "0": compare as JSON texts.
        assert.deepEqual(
          back.map((x) => JSON.stringify(x)),
          records.map((x) => JSON.stringify(x)),
        );
      },
    ),
    { numRuns: 100, seed: 5 },
  );
});

test('a file cut inside a record is an error naming it', () => {
  const p = join(dir, 'cut');
  writeFileSync(p, '[1,2]\n["é",');
  assert.throws(() => readRecordFile(p, () => {}), /cut ends inside a record \(truncated\)/);
  rmSync(p);
});

test("a task's leftovers are removed by its id, no other task's", () => {
  const mine = [tempFile(dir, 'shuffle', 12), tempFile(dir, 'fetch', 12)];
  const theirs = [tempFile(dir, 'shuffle', 123), tempFile(dir, 'agg', 1)];
  for (const p of [...mine, ...theirs]) writeFileSync(p, 'x');
  assert.equal(removeTaskTempFiles(dir, 12), 2);
  assert.deepEqual(readdirSync(dir).sort(), theirs.map((p) => p.slice(dir.length + 1)).sort());
  assert.equal(removeTaskTempFiles(join(dir, 'none'), 12), 0);
});

test('a file a dead thread left open is closed as it is removed', () => {
  const p = tempFile(dir, 'agg', 77);
  const fd = openSync(p, 'w');
  assert.equal(removeTaskTempFiles(dir, 77), 1);
  assert.throws(() => fstatSync(fd), /EBADF/);
});
