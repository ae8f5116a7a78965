import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventJson } from '../../backend/eventlog/eventJson.js';
import type { WickListenerTaskEnd } from '../../backend/protocol/listener.js';

/** Strings a JSON writer must escape, or must not. */
const strings = [
  '0',
  'exec "quoted" \\ back',
  'ünïcödé \u2028 \u2029 line\nbreak\ttab',
  'lone \ud800 surrogate',
  '\u0000\u001f control',
  'x'.repeat(500),
];
/** Numbers whose text differs between writers that get them wrong. */
const numbers = [0, -0, 1, 0.1 + 0.2, 1e21, 1e-7, 2 ** 53 - 1, 123.456, 5e-324];

/** TaskEnds as the DriverEndpoint makes them: its four fields, then each optional one or not. */
function taskEnds(): WickListenerTaskEnd[] {
  const out: WickListenerTaskEnd[] = [];
  const states = ['FINISHED', 'FAILED', 'KILLED', 'LOST'] as const;
  for (let mask = 0; mask < 64; mask++) {
    const i = out.length;
    const end: WickListenerTaskEnd = {
      event: 'WickListenerTaskEnd',
      taskId: numbers[i % numbers.length] as number,
      executorId: strings[i % strings.length] as string,
      state: states[i % states.length] as (typeof states)[number],
    };
    if (mask & 1) end.jobId = i;
    if (mask & 2) end.durationMs = numbers[(i + 3) % numbers.length] as number;
    if (mask & 4)
      end.metrics =
        i % 2
          ? {}
          : {
              shuffleWrite: { bytesWritten: i * 1_000_003, recordsWritten: i },
              shuffleRead: {
                localBytesRead: 1,
                remoteBytesRead: 2,
                remoteBytesReadToDisk: 0,
                recordsRead: 3,
                fetchWaitTimeMs: 0.25,
              },
              memoryBytesSpilled: 7,
            };
    if (mask & 8) {
      end.stageId = i;
      end.stageAttemptId = i % 3;
    }
    if (mask & 16) end.index = i * 7;
    if (mask & 32) end.error = strings[(i + 2) % strings.length] as string;
    out.push(end);
  }
  return out;
}

test('a task end is written as JSON.stringify writes it, whichever optional fields it has', () => {
  for (const e of taskEnds()) assert.equal(eventJson(e), JSON.stringify(e));
});

test('a task start is written as JSON.stringify writes it', () => {
  for (const [i, executorId] of strings.entries()) {
    for (const n of numbers) {
      const e = {
        event: 'WickListenerTaskStart' as const,
        taskId: n,
        stageId: i,
        stageAttemptId: 0,
        index: n,
        attempt: 1,
        executorId,
        time: 1_765_000_000_000 + n,
      };
      assert.equal(eventJson(e), JSON.stringify(e));
    }
  }
});

test('what the fast path does not know goes through JSON.stringify, with the same text', () => {
  const base = { event: 'WickListenerTaskEnd', taskId: 1, executorId: '0', state: 'FINISHED' };
  const odd: unknown[] = [
    // Keys in another order than the DriverEndpoint's.
    { state: 'FINISHED', event: 'WickListenerTaskEnd', taskId: 1, executorId: '0' },
    { ...base, index: 1, stageId: 2 },
    // A key the schema does not have, and one named as Object.prototype's.
    { ...base, extra: [1, 2] },
    { ...base, constructor: 'x' },
    // Values of types the schema does not allow: JSON.stringify's text for them.
    { ...base, durationMs: Number.NaN },
    { ...base, taskId: Number.POSITIVE_INFINITY },
    { ...base, taskId: '1' },
    { ...base, jobId: null },
    { ...base, metrics: null },
    { ...base, executorId: 7 },
    { ...base, durationMs: undefined, jobId: undefined },
    { event: 'WickListenerTaskStart', taskId: 1 },
    // Not a plain object.
    Object.assign(Object.create({ inherited: 1 }), base),
    Object.assign(Object.create(null), base),
    // Other events and other values.
    { event: 'WickListenerJobStart', jobId: 1, stageIds: [1, 2], time: 3 },
    { event: 'WickListenerApplicationEnd', time: 1, failure: 'line\nbreak' },
    null,
    'text',
    42,
  ];
  for (const e of odd) assert.equal(eventJson(e), JSON.stringify(e), JSON.stringify(e));
});

test('a task event with a toJSON of its own is written as JSON.stringify writes it', () => {
  const e = {
    event: 'WickListenerTaskEnd',
    taskId: 1,
    executorId: '0',
    state: 'FINISHED',
    toJSON: () => ({ replaced: true }),
  };
  assert.equal(eventJson(e), '{"replaced":true}');
});

test('every line is one line: no event is written with a raw line break', () => {
  for (const e of taskEnds()) assert.doesNotMatch(eventJson(e), /[\n\r]/);
});
