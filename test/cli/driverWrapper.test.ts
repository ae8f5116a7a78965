import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

/**
 * `wick driver-wrapper` exits with its application's exit code even when the application ends
 * before the worker watcher has connected: here the "worker" accepts the connection and never
 * answers, so the watcher is still connecting when the application is done.
 */
test("driver-wrapper keeps the application's exit code when it ends before the watcher connects", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-driver-wrapper-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const port = (silent.address() as { port: number }).port;
  for (const [code, expected] of [
    [0, 0],
    [3, 3],
  ]) {
    const app = join(dir, `app${code}.mjs`);
    writeFileSync(app, `console.log('ran'); process.exitCode = ${code};\n`);
    const child = spawn(
      process.execPath,
      [join('dist', 'wick.cjs'), 'driver-wrapper', `wick://127.0.0.1:${port}/Worker`, app],
      {
        cwd: process.cwd(),
        env: { ...process.env, WICK_MASTER: 'wick://127.0.0.1:1' },
        stdio: 'pipe',
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exit = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(exit, expected, out);
    assert.match(out, /^ran$/m);
  }
});
