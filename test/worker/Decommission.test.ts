/**
 * The worker's decommissioning on its own (pure logic, a manual clock, a fake worker): it tells
 * the master once, exits once nothing runs, or at the timeout after killing what still runs, and
 * tells a new master again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { ManualClock } from '../../backend/util/clock.js';
import { Decommission } from '../../backend/worker/Decommission.js';

function fakeWorker(running: number) {
  const clock = new ManualClock();
  const told: string[] = [];
  const exits: [number, string][] = [];
  let kills = 0;
  const host = {
    clock,
    running: () => running,
    killAll: async () => {
      kills++;
      running = 0;
    },
    tellMaster: (m: { type: string }) => void told.push(m.type),
    changed: () => {},
    exit: (code: number, reason: string) => void exits.push([code, reason]),
  };
  const d = new Decommission('worker-1', 10_000, host);
  return {
    d,
    clock,
    told,
    exits,
    kills: () => kills,
    setRunning: (n: number) => {
      running = n;
    },
  };
}

test('idle: tells the master once, and exits 0 a turn later', async () => {
  const w = fakeWorker(0);
  w.d.start('SIGPWR');
  w.d.start('the master asked');
  assert.deepEqual(w.told, ['WorkerDecommissioning']);
  assert.equal(w.d.reason, 'SIGPWR');
  assert.deepEqual(w.exits, [], 'not in the same turn: what was sent goes out first');
  await turn();
  assert.deepEqual(w.exits, [[0, 'Decommissioned (SIGPWR): nothing runs here']]);
  assert.equal(w.clock.pendingTimers(), 0, 'the deadline is cancelled');
});

test('busy: waits for what runs, exits once it has ended, kills nothing', async () => {
  const w = fakeWorker(2);
  w.d.start('the master asked');
  w.d.checkIdle();
  w.clock.advance(9_999);
  await turn();
  assert.deepEqual(w.exits, []);
  w.setRunning(0);
  w.d.checkIdle();
  await turn();
  assert.equal(w.exits.length, 1);
  assert.equal(w.kills(), 0);
  w.clock.advance(10_000);
  await turn();
  assert.equal(w.exits.length, 1, 'the deadline does not fire after the exit');
});

test('at the timeout: kills what still runs, then exits 0', async () => {
  const w = fakeWorker(1);
  w.d.start('SIGPWR');
  w.clock.advance(10_000);
  await turn();
  await turn();
  assert.equal(w.kills(), 1);
  assert.deepEqual(w.exits, [[0, 'Decommissioned (SIGPWR): killed what still ran at the timeout']]);
});

test('a new master is told again; a worker not decommissioning tells nothing', () => {
  const w = fakeWorker(1);
  w.d.reannounce();
  assert.deepEqual(w.told, []);
  w.d.start('SIGPWR');
  w.d.reannounce();
  assert.deepEqual(w.told, ['WorkerDecommissioning', 'WorkerDecommissioning']);
});
