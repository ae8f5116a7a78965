/**
 * The multi-host harness itself (test/helpers/hosts.ts): hosts reach each other over the bridge
 * and nothing else, /tmp and ~/.cache are each host's own, a cut host is unreachable until
 * restored, and cleanup leaves no process and no namespace.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { isAlive } from '../helpers/processes.js';

const skip = hostsUnavailable();

/** A TCP server on port 9000 that answers every connection with the host's name. */
const SERVE = `require('net').createServer((s) => s.end(process.argv[1])).listen(9000, process.argv[2], () => console.log('ready'))`;
/** Connects to argv[1]:9000 and prints what it gets, or the error's code. */
const CONNECT = `const s = require('net').connect({ host: process.argv[1], port: 9000, timeout: 1500 });
let got = ''; s.on('data', (d) => { got += d; }); s.on('end', () => console.log(got));
s.on('timeout', () => { console.log('ETIMEDOUT'); s.destroy(); });
s.on('error', (e) => console.log(e.code));`;

function netnsList(): string {
  return spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
}

test('hosts talk over the bridge, keep their own /tmp, can be cut off, and leave nothing behind', {
  skip,
}, async (t) => {
  const net = await startHosts(t, ['a', 'b']);
  const a = net.host('a');
  const b = net.host('b');
  assert.notEqual(a.address, b.address);
  assert.match(netnsList(), new RegExp(a.netns));

  const server = a.spawn(process.execPath, ['-e', SERVE, 'hello from a', a.address]);
  await waitForStdout(server, /ready/);
  const connect = async () => {
    const r = b.spawn(process.execPath, ['-e', CONNECT, a.address]);
    r.child.stdin?.end();
    await r.closed;
    return r.stdout.trim();
  };
  assert.equal(await connect(), 'hello from a');

  // Each process gets a fresh tmpfs /tmp: a file made on a is seen neither on b nor here.
  const marker = `/tmp/wick-hosts-test-${process.pid}`;
  const write = a.spawn('sh', ['-c', `echo x > ${marker} && ls ${marker}`]);
  await write.closed;
  assert.equal(write.stdout.trim(), marker);
  const look = b.spawn('sh', [
    '-c',
    `ls ${marker} 2>/dev/null || echo absent; ls -A "$HOME/.cache" | wc -l`,
  ]);
  await look.closed;
  assert.deepEqual(look.stdout.trim().split('\n'), ['absent', '0']);
  assert.equal(existsSync(marker), false);

  await a.cut();
  assert.equal(await connect(), 'ETIMEDOUT');
  await a.restore();
  assert.equal(await connect(), 'hello from a');

  const pid = server.pid;
  await net.cleanup();
  assert.equal(isAlive(pid), false, 'the server on host a was left running');
  for (const ns of net.namespaces) assert.doesNotMatch(netnsList(), new RegExp(`^${ns}\\b`, 'm'));
});

test('an install under /tmp (a clone there) is still there on every host, whose /tmp is its own', {
  skip,
}, async (t) => {
  // As a repository cloned into /tmp: the hosts' fresh /tmp would hide it.
  const install = mkdtempSync('/tmp/wick-install-');
  t.after(() => rmSync(install, { recursive: true, force: true }));
  writeFileSync(`${install}/package.json`, '{}');
  writeFileSync(`${install}/marker`, 'the install');
  const net = await startHosts(t, ['a'], { install });
  const p = net
    .host('a')
    .spawn('sh', ['-c', `cat ${install}/marker; echo; ls -A /tmp; echo x > /tmp/mine`], {
      cwd: install,
    });
  await p.closed;
  // The install and nothing else of the machine's /tmp (its parent holds this test's own files).
  assert.deepEqual(p.stdout.trim().split('\n'), ['the install', install.split('/')[2]]);
  assert.equal(existsSync('/tmp/mine'), false, "a host's /tmp is its own");
});

test('a grandchild that left its process group is killed with its namespace', {
  skip,
}, async (t) => {
  const net = await startHosts(t, ['solo']);
  const h = net.host('solo');
  // setsid: the sleeper is in no group the harness started; only the namespace knows it.
  const p = h.spawn('sh', ['-c', 'setsid sleep 600 & echo $!; wait']);
  const pid = Number((await waitForStdout(p, /^(\d+)$/m))[1]);
  assert.ok(isAlive(pid));
  await net.cleanup();
  assert.equal(isAlive(pid), false, `the setsid grandchild ${pid} was left running`);
  assert.doesNotMatch(netnsList(), new RegExp(h.netns));
});

async function waitForStdout(
  p: { stdout: string; child: { stdout: NodeJS.ReadableStream | null } },
  pattern: RegExp,
): Promise<RegExpExecArray> {
  for (;;) {
    const m = pattern.exec(p.stdout);
    if (m) return m;
    await new Promise((r) => p.child.stdout?.once('data', r));
  }
}
