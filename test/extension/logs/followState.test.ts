/** When a log's editor follows its end: the view moving up stops it; the end with the cursor resumes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FollowState } from '../../../extension/logs/followState.js';

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
