/**
 * `wick join`: the join line it prints keeps the secret off command lines, environments and shell
 * history (`wick join --save` reads it from stdin into the default secret file, readable by its
 * user only); and a secret put on a command line with --conf is warned of, loudly, by any command.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runWick, startWick } from '../../helpers/cli.js';

const home = mkdtempSync(join(tmpdir(), 'wick-test-join-'));
after(() => rmSync(home, { recursive: true, force: true }));
const SECRET = 'join-test-secret-0123456789abcdef';

async function withStdin(args: string[], input: string, env: NodeJS.ProcessEnv) {
  const p = startWick(args, { env });
  p.child.stdin?.end(input);
  const exit = await p.exited;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}

test('wick join --save keeps the secret read from stdin in the default file, mode 0600', async () => {
  const env = { XDG_CONFIG_HOME: join(home, 'a') };
  const r = await withStdin(['join', '--save'], `${SECRET}\n`, env);
  assert.equal(r.code, 0, r.stderr);
  const file = join(home, 'a', 'wick', 'cluster-secret');
  assert.equal(readFileSync(file, 'utf8'), `${SECRET}\n`);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(join(home, 'a', 'wick')).mode & 0o777, 0o700);
  // Where the secret was saved, `wick join` finds it and prints the lines that join a worker.
  const printed = await runWick(['join', 'wick://master-host:7077'], { env });
  assert.equal(printed.code, 0, printed.stderr);
  assert.ok(!printed.stdout.includes('WICK_AUTH_SECRET'), printed.stdout);
  const commands = printed.stdout.split('\n').filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(commands, ['wick join --save', 'wick worker wick://master-host:7077']);
  assert.ok(
    commands.every((l) => !l.includes(SECRET)),
    'no command holds the secret',
  );
});

test('wick join --save refuses a secret too short, naming its length', async () => {
  const env = { XDG_CONFIG_HOME: join(home, 'b') };
  const r = await withStdin(['join', '--save'], 'short\n', env);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /has 5 characters; expected 16 to 1024/);
});

test('a secret given with --conf on a command line is warned of', async () => {
  const r = await runWick([
    'status',
    '--master',
    'wick://127.0.0.1:1',
    '--conf',
    `wick.authenticate.secret=${SECRET}`,
  ]);
  assert.match(
    r.stderr,
    /WARNING: --conf wick\.authenticate\.secret=… puts the cluster secret on this process's command line/,
  );
  assert.ok(!r.stderr.includes(SECRET), 'the warning does not repeat the secret');
  // The file key is the way it points to, and is not warned of.
  const quiet = await runWick([
    'status',
    '--master',
    'wick://127.0.0.1:1',
    '--conf',
    `wick.authenticate.secret.file=${join(home, 'none')}`,
  ]);
  assert.doesNotMatch(quiet.stderr, /WARNING: --conf/);
});
