/** `wick --help`, every command's --help, --version, and an unknown command, from the built bundle. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assertBuilt, runWick } from '../helpers/cli.js';

before(assertBuilt);

const commands = ['master', 'worker', 'local-cluster', 'status', 'logs', 'demo'];

test('wick --help lists every command', async () => {
  for (const args of [['--help'], ['-h'], ['help']]) {
    const r = await runWick(args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: wick \[options\] \[command\]/);
    for (const c of commands) assert.match(r.stdout, new RegExp(`^  ${c} `, 'm'), `lists ${c}`);
  }
});

test("every command's --help shows its usage and options", async () => {
  const expected: Record<string, string[]> = {
    master: ['--host', '--port', '--webui-port', '--conf', '--properties-file'],
    worker: ['<master-url>', '--cores', '--memory', '--work-dir', '--conf', '--properties-file'],
    'local-cluster': ['--workers', '--cores', '--memory', '--port', '--webui-port', '--work-dir'],
    status: ['--master', '--json', '--conf', '--properties-file'],
    logs: ['<id>', '--master', '--follow', '--stderr', '--conf', '--properties-file'],
    demo: [],
  };
  await Promise.all(
    commands.map(async (c) => {
      for (const args of [
        [c, '--help'],
        ['help', c],
      ]) {
        const r = await runWick(args);
        assert.equal(r.code, 0, `wick ${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^Usage: wick ${c} `), r.stdout);
        for (const o of expected[c] ?? []) assert.ok(r.stdout.includes(o), `${c} help shows ${o}`);
        // --print-ready is for scripts and peers in other languages too (docs/protocol.md);
        // options for wick's own launchers stay hidden.
        assert.equal(
          r.stdout.includes('--print-ready'),
          c === 'master' || c === 'worker',
          `${c} shows --print-ready only for the daemons`,
        );
        assert.ok(!r.stdout.includes('--exit-with-parent'), `${c} hides --exit-with-parent`);
      }
    }),
  );
});

test('wick --version prints a version', async () => {
  const r = await runWick(['--version']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout.trim(), /^\d+\.\d+\.\d+/);
});

test('an unknown command or option fails and points at --help', async () => {
  const r = await runWick(['nope']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /unknown command 'nope'/);
  assert.match(r.stderr, /wick --help/);
  const o = await runWick(['status', '--bogus']);
  assert.notEqual(o.code, 0);
  assert.match(o.stderr, /unknown option '--bogus'/);
  const m = await runWick(['worker']);
  assert.notEqual(m.code, 0);
  assert.match(m.stderr, /missing required argument 'master-url'/);
});
