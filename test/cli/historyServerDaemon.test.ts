/**
 * `wick start-history-server` / `stop-history-server` as an operator runs them (Spark's
 * start-history-server.sh / stop-history-server.sh): the history server in the background with
 * a pid file and a log, serving behind the cluster's login with the secret handed over a pipe,
 * a second copy refused, stopped by its pid file. Daemons are found by a marker in their
 * environment too, so that a failed test leaves none behind.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import {
  assertBuilt,
  isAlive,
  killMarked,
  markedProcesses,
  runWick,
  startWick,
  waitUntilGone,
} from '../helpers/cli.js';

before(assertBuilt);

test('start-history-server detaches with a pid file and a log, serves behind the login, refuses a second copy; stop-history-server ends it', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-history-daemon-'));
  const mark = randomUUID();
  const env: NodeJS.ProcessEnv = {
    WICK_PID_DIR: join(dir, 'pids'),
    WICK_LOG_DIR: join(dir, 'logs'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  };
  t.after(async () => {
    await killMarked(mark);
    rmSync(dir, { recursive: true, force: true });
  });
  const events = join(dir, 'events');
  mkdirSync(events);
  const secret = randomBytes(24).toString('hex');
  const args = ['--host', '127.0.0.1', '--port', '0', '--dir', events, '--secret-stdin'];

  const p = startWick(['start-history-server', ...args], { mark, cwd: dir, env });
  p.child.stdin?.end(`${secret}\n`);
  const { code } = await p.exited;
  assert.equal(code, 0, `${p.stdout()}\n${p.stderr()}`);
  const pidFile = join(dir, 'pids', `wick-${userInfo().username}-history-server-1.pid`);
  assert.ok(existsSync(pidFile), `pid file ${pidFile}`);
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  assert.ok(isAlive(pid), 'the history server runs after start-history-server returned');
  const m =
    /started history-server \(process (\d+)\) at (https?:\/\/[\d.]+:\d+)\/?, reading (.+), logging to (.+)$/m.exec(
      p.stdout(),
    );
  assert.ok(m, p.stdout());
  assert.equal(Number(m[1]), pid);
  assert.equal(m[3], events);
  const logs = readdirSync(join(dir, 'logs'));
  assert.deepEqual(
    logs.map((l) => /^wick-[\w.-]+-history-server-1-[\w.-]+\.out$/.test(l)),
    [true],
  );
  const log = readFileSync(join(dir, 'logs', logs[0] as string), 'utf8');
  assert.ok(!log.includes(secret), 'the secret is not in the log');
  assert.ok(
    !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(secret),
    'nor on its command line',
  );

  // It serves, behind the login, with the secret it was handed: refused without, answered with.
  const url = m[2] as string;
  const refused = await fetch(`${url}/api/v1/applications`, { headers: { connection: 'close' } });
  assert.equal(refused.status, 401);
  await refused.text();
  const listed = await fetch(`${url}/api/v1/applications`, {
    headers: { authorization: `Bearer ${secret}`, connection: 'close' },
  });
  assert.equal(listed.status, 200);
  assert.deepEqual(await listed.json(), []);

  const second = await runWick(
    ['start-history-server', '--host', '127.0.0.1', '--port', '0', '--dir', events],
    {
      mark,
      cwd: dir,
      env,
    },
  );
  assert.equal(second.code, 1);
  assert.ok(
    second.stderr.includes(`history-server running as process ${pid}. Stop it first.`),
    second.stderr,
  );
  assert.equal(markedProcesses(mark).length, 1, 'no second history server is left running');

  const stopped = await runWick(['stop-history-server'], { mark, cwd: dir, env });
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.ok(stopped.stdout.includes(`stopped history-server (process ${pid})`), stopped.stdout);
  assert.equal(existsSync(pidFile), false, 'pid file removed');
  assert.deepEqual(await waitUntilGone([pid], 1), [], 'the history server is gone');
  const again = await runWick(['stop-history-server'], { mark, cwd: dir, env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /no history-server to stop/);
});
