/**
 * The syntax-error path of a first submit (issue 29): CheckApplication bundles the file in the
 * agent while its local cluster is still starting, so that the error reaches the editor before
 * the cluster is up, not after it. No timed assertion: the error must come before Connect's
 * answer, the positive event a path that waits for the cluster would come after.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import {
  CheckApplication,
  Connect,
  DriverExited,
  DriverOutput,
  SubmitApplication,
} from '../../backend/agent/protocol.js';

test('a syntax error is answered while the local cluster starts, and a submit of it on the running cluster before its driver could, each with the output and end first; a clean file checks clean', {
  timeout: 90_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-check-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, 'broken.ts');
  writeFileSync(bad, "import { WickContext } from 'wick';\nconst wc = WickContext.create(;\n");
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const events: string[] = [];
  let output = '';
  conn.onNotification(DriverOutput, (p) => {
    if (p.outputId === 'check-1') output += p.data;
  });
  conn.onNotification(DriverExited, (p) => {
    events.push(`exited ${p.outputId} ${p.exitCode}`);
  });
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  const connected = conn
    .sendRequest(Connect, {
      master: 'local',
      localCluster: { workers: 2, cores: 1, memory: '512m' },
    })
    .then((c) => {
      events.push(`connect ${c.kind}`);
      return c;
    });
  const checked = await conn.sendRequest(CheckApplication, { file: bad, outputId: 'check-1' });
  events.push('checked');
  assert.equal(checked.success, false, JSON.stringify(checked));
  // Named from its folder, as the driver (run there) names it.
  assert.match(checked.message, /^Syntax error in broken\.ts:2:\d+: /);
  // The run's output says it as `wick submit` would, by absolute path (Problems entries).
  assert.match(output, new RegExp(`${bad.replace(/[.\\/]/g, '\\$&')}:2:\\d+: error: `));
  const c = await connected;
  assert.equal(c.kind, 'connected', JSON.stringify(c));
  assert.deepEqual(events, ['exited check-1 1', 'checked', 'connect connected']);
  // Submitted on the running cluster: the agent's own bundle answers before the driver's child
  // (which must start Node and load the CLI first) would, once, with the run's output and end
  // first and the child's own words not added to them.
  output = '';
  const submitted = await conn.sendRequest(SubmitApplication, {
    file: bad,
    args: [],
    deployMode: 'client',
    outputId: 'check-1',
  });
  events.push('submitted');
  assert.equal(submitted.success, false, JSON.stringify(submitted));
  assert.match(
    submitted.message,
    /^The application did not compile: Syntax error in broken\.ts:2:/,
  );
  assert.deepEqual(events.slice(3), ['exited check-1 1', 'submitted']);
  assert.equal(output.match(/Syntax error in/g)?.length, 1, output);
  events.splice(3);
  // A clean file checks clean, and nothing of it is output.
  const clean = await conn.sendRequest(CheckApplication, {
    file: join(process.cwd(), 'examples', 'pi.ts'),
    outputId: 'check-2',
  });
  assert.equal(clean.success, true, JSON.stringify(clean));
  assert.deepEqual(events.slice(3), []);
  // Bad input is refused by name.
  await assert.rejects(
    conn.sendRequest(CheckApplication, { file: '', outputId: 'check-3' }),
    /file must be a path of 1 to 4096 characters, got ""/,
  );
  await assert.rejects(
    conn.sendRequest(CheckApplication, { file: bad, outputId: 'no spaces allowed' }),
    /outputId "no spaces allowed" is not valid/,
  );
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  await new Promise((r) => child.once('exit', r));
  conn.dispose();
});
