/** LogFollows: the registry of a worker's log follows, by follower endpoint and follow id. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogFollower } from '../../../backend/worker/logs/LogFollower.js';
import { LogFollows } from '../../../backend/worker/logs/LogFollows.js';

/** A follower that records what it was told; stopping it ends it, as LogFollower's end does. */
function fake(follows: LogFollows, ref: string, id: string) {
  const events: string[] = [];
  const follower = {
    stop(reason: string) {
      events.push(`stop: ${reason}`);
      follows.ended(ref, id, follower as unknown as LogFollower);
    },
    poke() {
      events.push('poke');
    },
  };
  return { follower: follower as unknown as LogFollower, events };
}

test('a follow with the same follower and id replaces the old one, which is stopped', () => {
  const follows = new LogFollows();
  const a = fake(follows, 'wick://c:1/F1', 'f1');
  const b = fake(follows, 'wick://c:1/F1', 'f1');
  follows.add('wick://c:1/F1', 'f1', 'c:1', a.follower);
  follows.add('wick://c:1/F1', 'f1', 'c:1', b.follower);
  assert.deepEqual(a.events, ['stop: replaced by a new follow with the same id']);
  assert.equal(follows.size, 1, 'the new one stays registered');
  // The old one ending late does not unregister its replacement.
  follows.ended('wick://c:1/F1', 'f1', a.follower);
  assert.equal(follows.size, 1);
});

test('StopFollowLog stops the follows with that id, whichever endpoint follows', () => {
  const follows = new LogFollows();
  const a = fake(follows, 'wick://c:1/F1', 'f1');
  const b = fake(follows, 'wick://c:2/F1', 'f1');
  const other = fake(follows, 'wick://c:1/F2', 'f10');
  follows.add('wick://c:1/F1', 'f1', 'c:1', a.follower);
  follows.add('wick://c:2/F1', 'f1', 'c:2', b.follower);
  follows.add('wick://c:1/F2', 'f10', 'c:1', other.follower);
  follows.stop('f1');
  assert.deepEqual(a.events, ['stop: stopped by the follower']);
  assert.deepEqual(b.events, ['stop: stopped by the follower']);
  assert.deepEqual(other.events, [], 'f10 is another follow');
  assert.equal(follows.size, 1);
});

test("a disconnection ends that env's follows; a source change pokes all; stopAll ends all", () => {
  const follows = new LogFollows();
  const a = fake(follows, 'wick://c:1/F1', 'f1');
  const b = fake(follows, 'wick://c:2/F1', 'f2');
  follows.add('wick://c:1/F1', 'f1', 'c:1', a.follower);
  follows.add('wick://c:2/F1', 'f2', 'c:2', b.follower);
  follows.sourceChanged();
  follows.dropAddress('c:1');
  assert.deepEqual(a.events, ['poke', 'stop: follower disconnected']);
  follows.stopAll();
  assert.deepEqual(b.events, ['poke', 'stop: worker stopped']);
  assert.equal(follows.size, 0);
});
