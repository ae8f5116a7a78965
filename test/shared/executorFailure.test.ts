import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  explainUnregisteredExit,
  UnregisteredExits,
} from '../../backend/app/driver/executorFailure.js';
import {
  DRIVER_HOST_HINT,
  firstLine,
  withDriverHostHint,
} from '../../backend/shared/executorFailure.js';

const refused = [
  'Command exited with code 1',
  'The end of its stderr:',
  'ERROR CoarseGrainedExecutorBackend: Cannot register with driver: wick://127.0.0.1:42865/CoarseGrainedScheduler: Failed to connect to wick://127.0.0.1:42865: connection refused',
  'INFO ShutdownHookManager: bye',
].join('\n');

test('a connection failure gets the hint after the line that shows it', () => {
  const lines = withDriverHostHint(refused).split('\n');
  assert.ok(lines[2]?.endsWith(`connection refused${DRIVER_HOST_HINT}`));
  assert.equal(lines[3], 'INFO ShutdownHookManager: bye');
});

test("Node's codes for an unreachable address get it too; other failures do not", () => {
  for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']) {
    assert.equal(
      withDriverHostHint(`connect ${code} 10.0.0.9:4000`),
      `connect ${code} 10.0.0.9:4000${DRIVER_HOST_HINT}`,
    );
  }
  const oom = 'Command exited with code 134\nFATAL ERROR: JavaScript heap out of memory';
  assert.equal(withDriverHostHint(oom), oom);
});

test('the hint is added once, however often the message passes through', () => {
  assert.equal(withDriverHostHint(withDriverHostHint(refused)), withDriverHostHint(refused));
});

test('firstLine keeps what an executor summary shows', () => {
  assert.equal(firstLine(refused), 'Command exited with code 1');
  assert.equal(firstLine('one line'), 'one line');
});

test("the driver's warning names the executor and quotes the reason with the hint", () => {
  const w = explainUnregisteredExit('3', refused);
  assert.match(w, /^Executor 3 exited before registering with the driver: Command exited/);
  assert.ok(w.includes(`connection refused${DRIVER_HOST_HINT}`));
});

test('the same reason again, with other ports, is a one-line note; a new reason is quoted', () => {
  const exits = new UnregisteredExits();
  assert.equal(exits.explain('0', refused).level, 'warn');
  const again = exits.explain('1', refused.replaceAll('42865', '42866'));
  assert.deepEqual(again, {
    level: 'info',
    text: 'Executor 1 exited before registering with the driver, as executor 0 did',
  });
  assert.equal(exits.explain('2', 'Command exited with code 2').level, 'warn');
});
