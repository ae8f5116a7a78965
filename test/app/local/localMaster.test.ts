import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import {
  isInProcessMaster,
  MAX_LOCAL_THREADS,
  parseLocalMaster,
} from '../../../backend/app/local/localMaster.js';

test('local[N] runs N task threads; local[*] one per core', () => {
  assert.deepEqual(parseLocalMaster('local[1]'), { threads: 1 });
  assert.deepEqual(parseLocalMaster('local[4]'), { threads: 4 });
  assert.deepEqual(parseLocalMaster(` local[${MAX_LOCAL_THREADS}] `), {
    threads: MAX_LOCAL_THREADS,
  });
  assert.deepEqual(parseLocalMaster('local[*]'), {
    threads: Math.min(availableParallelism(), MAX_LOCAL_THREADS),
  });
});

test("plain local (Wick's embedded cluster) and cluster URLs are not in-process masters", () => {
  for (const m of ['local', 'wick://127.0.0.1:7077', 'spark://h:7077', 'localhost:7077']) {
    assert.equal(parseLocalMaster(m), undefined, m);
    assert.equal(isInProcessMaster(m), false, m);
  }
  assert.equal(isInProcessMaster('local[2]'), true);
});

test('a bad local[…] is refused, naming it and what is expected', () => {
  for (const bad of ['local[0]', 'local[]', 'local[x]', 'local[-1]', 'local[2,3]', 'local[1.5]']) {
    assert.throws(
      () => parseLocalMaster(bad),
      (e: Error) => e.message.includes(`"${bad}"`) && e.message.includes('expected local[N]'),
      bad,
    );
  }
  assert.throws(() => parseLocalMaster(`local[${MAX_LOCAL_THREADS + 1}]`), /from 1 to 256/);
});
