/**
 * `wick master` and `wick worker` refusing to start, as a user sees it: a non-zero exit, a message
 * that names the key, the value and what is expected, and no process left behind.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertBuilt, markedProcesses, type RunResult, runWick } from '../helpers/cli.js';
import { HeldPorts } from '../helpers/net.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-cli-daemons-'));
before(assertBuilt);
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs wick, expecting it to refuse: non-zero exit, each of `says` in stderr, nothing left. */
async function assertRefuses(
  args: string[],
  says: (string | RegExp)[],
  env?: NodeJS.ProcessEnv,
): Promise<RunResult> {
  const mark = randomUUID();
  const r = await runWick(args, { mark, cwd: dir, env });
  assert.notEqual(r.code, 0, `wick ${args.join(' ')} should fail; stderr:\n${r.stderr}`);
  assert.equal(r.signal, null, 'exits by itself, not by a signal');
  for (const s of says) {
    if (typeof s === 'string') assert.ok(r.stderr.includes(s), `stderr names ${s}:\n${r.stderr}`);
    else assert.match(r.stderr, s);
  }
  assert.deepEqual(markedProcesses(mark), [], 'no process left');
  return r;
}

const noMaster = 'wick://127.0.0.1:1';

test('wick master --port abc names the key, the value, what is expected and the flag', async () => {
  await assertRefuses(
    ['master', '--host', '127.0.0.1', '--port', 'abc'],
    ['wick.master.port', '"abc"', 'a whole number from 0 to 65535', '--port'],
  );
});

test('wick master --webui-port 70000 is refused', async () => {
  await assertRefuses(
    ['master', '--host', '127.0.0.1', '--port', '0', '--webui-port', '70000'],
    ['wick.master.ui.port', '"70000"', 'from 0 to 65535', '--webui-port'],
  );
});

test('wick worker --memory 12x names the key, the value and what is expected', async () => {
  await assertRefuses(
    ['worker', noMaster, '--host', '127.0.0.1', '--memory', '12x', '--work-dir', join(dir, 'w1')],
    ['wick.worker.memory', '"12x"', 'a size such as 512k, 512m or 2g', '--memory'],
  );
});

test('wick worker --cores 0 names the key, the value and what is expected', async () => {
  await assertRefuses(
    ['worker', noMaster, '--host', '127.0.0.1', '--cores', '0', '--work-dir', join(dir, 'w2')],
    ['wick.worker.cores', '"0"', 'a whole number from 1 to', '--cores'],
  );
});

test('a bad value from --conf or a properties file says where it came from', async () => {
  await assertRefuses(
    ['master', '--port', '0', '--conf', 'wick.worker.timeout=soon'],
    ['wick.worker.timeout', '"soon"', 'a duration such as', '--conf'],
  );
  const file = join(dir, 'bad.conf');
  writeFileSync(file, '# bad\nwick.deploy.spreadOut maybe\n');
  await assertRefuses(
    ['master', '--port', '0', '--properties-file', file],
    ['wick.deploy.spreadOut', '"maybe"', 'true or false', `properties file ${file}`],
  );
  await assertRefuses(['master', '--port', '0', '--conf', 'novalue'], ['"novalue"', 'key=value']);
});

test('wick worker with a bad master URL says what a master URL looks like', async () => {
  await assertRefuses(
    ['worker', 'mesos://m:5050', '--work-dir', join(dir, 'w3')],
    ['"mesos://m:5050"', 'expected wick://host:port', 'spark://'],
  );
});

test('wick worker with an unwritable work dir names the path', async () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory');
  const workDir = join(file, 'work');
  await assertRefuses(
    ['worker', noMaster, '--host', '127.0.0.1', '--cores', '1', '--work-dir', workDir],
    [`Work dir ${workDir} is not writable`, '--work-dir'],
  );
  // Set by the environment instead of a flag: the same message.
  await assertRefuses(
    ['worker', noMaster, '--host', '127.0.0.1', '--cores', '1'],
    [`Work dir ${workDir} is not writable`],
    { WICK_WORKER_DIR: workDir },
  );
});

test('wick master on a busy port with wick.port.maxRetries=0 fails naming the port', async () => {
  const held = await HeldPorts.acquire(1);
  try {
    await assertRefuses(
      [
        'master',
        '--host',
        '127.0.0.1',
        '--port',
        String(held.base),
        '--webui-port',
        '0',
        '--conf',
        'wick.port.maxRetries=0',
      ],
      [`127.0.0.1: ports ${held.base} to ${held.base} are all in use`, 'wick.port.maxRetries=0'],
    );
  } finally {
    await held.releaseAll();
  }
});

test('wick worker with a work dir under a read-only dir names the path', {
  skip: process.getuid?.() === 0 ? 'root may write into a read-only dir' : false,
}, async () => {
  const readOnly = join(dir, 'read-only');
  mkdirSync(readOnly, { mode: 0o555 });
  const workDir = join(readOnly, 'work');
  try {
    await assertRefuses(
      ['worker', noMaster, '--host', '127.0.0.1', '--cores', '1', '--work-dir', workDir],
      [`Work dir ${workDir} is not writable`, '--work-dir'],
    );
  } finally {
    chmodSync(readOnly, 0o755);
  }
});
