import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ActiveStage,
  ConsoleProgressBar,
  type Terminal,
} from '../../../../backend/app/driver/progress/ConsoleProgressBar.js';
import { ManualClock } from '../../../../backend/util/clock.js';

/** A terminal that keeps what was written to it, in order, with the stream's name. */
class FakeTerminal implements Terminal {
  columns = 41;
  constructor(
    readonly name: string,
    readonly log: string[],
    readonly isTTY = true,
  ) {}
  write(chunk: string | Uint8Array): boolean {
    this.log.push(`${this.name}:${String(chunk)}`);
    return true;
  }
}

function setup(isTTY = true) {
  const log: string[] = [];
  const clock = new ManualClock(1_000);
  const err = new FakeTerminal('err', log, isTTY);
  const out = new FakeTerminal('out', log, isTTY);
  let stages: ActiveStage[] = [];
  const bar = new ConsoleProgressBar({ stages: () => stages, err, out, clock });
  return { log, clock, err, out, bar, set: (s: ActiveStage[]) => (stages = s) };
}

const st = (done: number, active: number, at = 1_000): ActiveStage => ({
  stageId: 2,
  numTasks: 8,
  numCompletedTasks: done,
  numActiveTasks: active,
  submittedAtMs: at,
});

test('frames: nothing for a stage younger than 500 ms, then the bar, redrawn only when it changes, cleared at the end', () => {
  const { log, clock, bar, set } = setup();
  set([st(0, 2)]);
  bar.start();
  clock.advance(400);
  assert.deepEqual(log, [], 'a stage under 500 ms old shows nothing');
  clock.advance(200);
  assert.deepEqual(log, ['err:\r[Stage 2:>                  (0 + 2) / 8]\r']);
  clock.advance(1_000);
  assert.equal(log.length, 1, 'an unchanged bar is not drawn again');
  set([st(4, 2)]);
  clock.advance(200);
  assert.equal(log.at(-1), 'err:\r[Stage 2:=========>         (4 + 2) / 8]\r');
  set([]);
  clock.advance(200);
  assert.equal(log.at(-1), `err:\r${' '.repeat(40)}\r`, 'the line is cleared once no stage runs');
  const n = log.length;
  clock.advance(2_000);
  assert.equal(log.length, n, 'nothing more once clear');
  bar.stop();
});

test("the program's own output is never garbled: the bar is cleared before it and drawn again after", () => {
  const { log, clock, bar, set, out, err } = setup();
  set([st(1, 1, 0)]);
  bar.start();
  clock.advance(200);
  assert.match(log.at(-1) ?? '', /^err:\r\[Stage 2:/);
  out.write('Pi is roughly 3.14\n');
  err.write('a warning of the app\n');
  assert.deepEqual(log.slice(-3), [
    `err:\r${' '.repeat(40)}\r`,
    'out:Pi is roughly 3.14\n',
    'err:a warning of the app\n',
  ]);
  clock.advance(200);
  assert.match(log.at(-1) ?? '', /^err:\r\[Stage 2:.*\(1 \+ 1\) \/ 8\]\r$/, 'drawn again below it');
  bar.stop();
  const n = log.length;
  out.write('after\n');
  assert.deepEqual(
    log.slice(n),
    ['out:after\n'],
    'stop gives the streams back and leaves the line clear',
  );
  assert.equal(log[n - 1], `err:\r${' '.repeat(40)}\r`);
});

test('not a terminal: nothing is drawn and the streams are left alone', () => {
  const { log, clock, bar, set, out } = setup(false);
  const write = out.write;
  set([st(1, 1, 0)]);
  bar.start();
  clock.advance(5_000);
  assert.equal(bar.enabled, false);
  assert.deepEqual(log, []);
  assert.equal(out.write, write);
  bar.stop();
});

test('a line the program left open is never written over: no bar until the program ends it', () => {
  const { log, clock, bar, set, out } = setup();
  set([st(1, 1, 0)]);
  bar.start();
  out.write('Computing');
  clock.advance(1_000);
  assert.deepEqual(log, ['out:Computing'], 'no bar (its \\r would return over "Computing")');
  out.write(Buffer.from('... done\n'));
  clock.advance(200);
  assert.match(log.at(-1) ?? '', /^err:\r\[Stage 2:.*\(1 \+ 1\) \/ 8\]\r$/, 'drawn once it ends');
  bar.stop();
});

test('a stream that is no terminal opens no line on the screen', () => {
  const log: string[] = [];
  const clock = new ManualClock(1_000);
  const err = new FakeTerminal('err', log, true);
  const out = new FakeTerminal('out', log, false);
  const bar = new ConsoleProgressBar({ stages: () => [st(1, 1, 0)], err, out, clock });
  bar.start();
  out.write('into a file, no newline');
  clock.advance(200);
  assert.match(log.at(-1) ?? '', /^err:\r\[Stage 2:/);
  bar.stop();
});
