/**
 * backend/util/startupBlocks.ts in a real process: what it writes is what /proc/<pid>/environ and
 * /proc/<pid>/cmdline show another process, while the process itself, and a child it starts, keep
 * the values they had.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/cli.js';

const CHILD = `
import { spawnSync } from 'node:child_process';
import { rewriteStartupBlock } from ${JSON.stringify(join(repoRoot, 'backend/util/startupBlocks.ts'))};
const star = (b) => Buffer.from(b).fill('*', b.indexOf('=') + 1);
process.env.PLAIN_HIDDEN = process.env.PLAIN_HIDDEN;
const env = rewriteStartupBlock('environ', (e) => e.toString().startsWith('PLAIN_HIDDEN=') ? star(e) : undefined);
const args = rewriteStartupBlock('cmdline', (e) => e.toString().startsWith('--token=') ? star(e) : undefined);
let refused = '';
try { rewriteStartupBlock('cmdline', (e) => e.toString().startsWith('--token') ? Buffer.from('x') : undefined); }
catch (err) { refused = err.message; }
const inherited = spawnSync(process.execPath, ['-e', 'process.stdout.write(process.env.PLAIN_HIDDEN)']).stdout.toString();
console.log(JSON.stringify({ env, args, refused, own: process.env.PLAIN_HIDDEN, inherited, argv: process.argv.at(-1) }));
process.stdin.resume();
`;

test('a rewritten entry is what another process reads; the process and its children keep the value', async () => {
  const value = 'plain-value-1f2e3d4c';
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', CHILD, '--', `--token=${value}`],
    {
      cwd: repoRoot,
      env: { ...process.env, PLAIN_HIDDEN: value, PLAIN_KEPT: value },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  try {
    let out = '';
    child.stdout.setEncoding('utf8');
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}): ${out}`)));
    });
    const r = JSON.parse(line) as Record<string, unknown>;
    assert.equal(r.env, 1);
    assert.equal(r.args, 1);
    assert.match(String(r.refused), /must keep its \d+ bytes/);
    assert.equal(r.own, value, 'its own process.env keeps the value');
    assert.equal(r.inherited, value, 'a child it starts gets the value');
    assert.equal(r.argv, `--token=${value}`, 'process.argv is a copy, untouched');

    const environ = readFileSync(`/proc/${child.pid}/environ`, 'latin1').split('\0');
    assert.ok(
      environ.includes(`PLAIN_HIDDEN=${'*'.repeat(value.length)}`),
      'masked as another process reads it',
    );
    assert.ok(
      environ.includes(`PLAIN_KEPT=${value}`),
      'an entry it was not asked to rewrite is as it was',
    );
    const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'latin1').split('\0');
    assert.ok(cmdline.includes(`--token=${'*'.repeat(value.length)}`), cmdline.join(' '));
    assert.ok(!cmdline.join(' ').includes(value));
  } finally {
    child.kill();
  }
});
