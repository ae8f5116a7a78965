/** When a log's editor follows its end: the view moving up stops it; the end with the cursor resumes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FollowState } from '../../../extension/logs/followState.js';
import { FollowWindow } from '../../helpers/followWindow.js';

test('a log follows from the start, and the follow moving the view down keeps it so', () => {
  const f = new FollowState();
  assert.equal(f.following, true);
  f.viewed(0, 30, 30, 30);
  f.viewed(70, 100, 100, 100);
  f.viewed(70, 100, 140, 140);
  assert.equal(f.following, true, 'lines came faster than the view: still following');
});

test('scrolling up stops it; scrolling back to the end with the cursor there resumes it', () => {
  const f = new FollowState();
  f.viewed(70, 100, 100, 100);
  f.viewed(40, 70, 110, 110);
  assert.equal(f.following, false);
  f.viewed(50, 80, 120, 120);
  assert.equal(f.following, false, 'down, but not to the end');
  f.viewed(90, 119, 120, 120);
  assert.equal(f.following, true, 'the end in view (the line before the empty last one)');
});

test("the user's cursor moves decide too: off the end stops, onto the end resumes", () => {
  const f = new FollowState();
  f.moved(10, 100);
  assert.equal(f.following, false);
  f.viewed(80, 100, 100, 10);
  assert.equal(f.following, false, 'the end in view but the cursor elsewhere');
  f.moved(100, 100);
  assert.equal(f.following, true);
});

test("the follow's own move to the end, heard after the user scrolled up, does not resume it", () => {
  const f = new FollowState();
  f.viewed(70, 100, 100, 100);
  // Lines came; the follow moved to the end before the user's scroll-up was heard.
  f.revealed();
  f.viewed(5, 35, 147, 147); // the user's scroll up, heard first
  assert.equal(f.following, false);
  // Then the follow's move, with the cursor it put at the end: back to where the user was.
  assert.equal(f.viewed(117, 147, 147, 147), 5);
  assert.equal(f.following, false, 'still stopped where the user scrolled');
  assert.equal(f.viewed(5, 35, 148, 147), undefined, 'the move back is no news');
  f.viewed(118, 148, 148, 148); // the user scrolls back down to the end
  assert.equal(f.following, true);
});

test('a cursor off the end stops it, unless the edit put it there (a whole-document replace)', () => {
  const f = new FollowState();
  f.endLine = 400;
  // Lines appended below the cursor, the cursor where the follow left it.
  assert.equal(f.edited(400, false), true);
  // A busy window: VS Code replaced the whole document, and the cursor went to its start.
  assert.equal(f.edited(0, true), true, 'the edit, not the user, moved the cursor');
  // Lines appended, and the cursor up at line 10: someone put it there.
  assert.equal(f.edited(10, false), false);
  assert.equal(f.following, false);
  assert.equal(f.edited(400, true), false, 'stopped stays stopped until the user comes back');
});

test("a late report of the follow's own cursor move does not stop it; anyone else's does", () => {
  const f = new FollowState();
  f.movedTo(346);
  f.movedTo(405);
  // The window, behind, reports the move to 346 once the log has 420 lines.
  f.selected(346, 420, 'command');
  assert.equal(f.following, true, 'its own move, reported late');
  assert.equal(f.edited(346, false), true, 'lines came with the cursor still there');
  // The cursor carried by appended lines is an edit's doing.
  f.selected(430, 430, 'edit');
  assert.equal(f.following, true);
  // A command that puts it elsewhere (the user's Go to Line, another extension's) stops it.
  f.selected(10, 440, 'command');
  assert.equal(f.following, false);
});

test('a hand on a line the follow once used is still the user choosing it', () => {
  const f = new FollowState();
  f.movedTo(346);
  f.movedTo(405);
  f.selected(346, 420, 'hand');
  assert.equal(f.following, false);
});

/** What happens in a window, in an order fast-check picks: lines come, either side reads late. */
const steps = fc.array(
  fc.oneof(
    fc.record({ k: fc.constant('append' as const), n: fc.integer({ min: 1, max: 8 }) }),
    fc.constant({ k: 'window' as const }),
    fc.constant({ k: 'host' as const }),
  ),
  { maxLength: 400 },
);

function play(w: FollowWindow, s: { k: 'append' | 'window' | 'host'; n?: number }): void {
  if (s.k === 'append') w.append(s.n ?? 1);
  else if (s.k === 'window') w.windowStep();
  else w.hostStep();
}

test('however late either side reads, a followed log keeps following and ends with its end in view', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), steps, (lines, run) => {
      const w = new FollowWindow(lines);
      for (const s of run) {
        play(w, s);
        assert.equal(w.follow.following, true);
      }
      w.settle();
      assert.equal(w.follow.following, true);
      assert.ok(w.bottom() >= w.lines - 2, `the end in view: ${w.bottom()} of ${w.lines}`);
      assert.equal(w.cursor, w.lines - 1, 'the cursor at the end');
    }),
    { numRuns: 1000 },
  );
});

test('however late either side reads, a user who scrolls up stays where they scrolled', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 100, max: 200 }),
      steps,
      fc.integer({ min: 1, max: 60 }),
      steps,
      (lines, before, by, after) => {
        const w = new FollowWindow(lines);
        for (const s of before) play(w, s);
        // (Scrolled once the view has come to the end. A scroll while the follow's own moves are
        // still on their way can be undone by one of them: see FollowState.viewed.)
        w.settle();
        const top = w.scrollUp(by);
        for (const s of after) play(w, s);
        w.settle();
        assert.equal(w.follow.following, false);
        assert.equal(w.top, top, 'the view where the user left it');
      },
    ),
    { numRuns: 1000 },
  );
});

test('however late either side reads, a cursor put up the log by a command stops the follow there', () => {
  fc.assert(
    fc.property(fc.integer({ min: 100, max: 200 }), steps, steps, (lines, before, after) => {
      const w = new FollowWindow(lines);
      for (const s of before) play(w, s);
      w.commandCursor(10);
      for (const s of after) play(w, s);
      w.settle();
      assert.equal(w.follow.following, false);
      // (A move of the follow's sent before it heard of the command may still land after it.)
      const { cursor, top } = w;
      w.append(5);
      w.settle();
      assert.deepEqual([w.cursor, w.top], [cursor, top], 'nothing moves as lines keep coming');
    }),
    { numRuns: 1000 },
  );
});
