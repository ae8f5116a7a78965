/**
 * docs/protocol.md claims that a peer can be written from it alone, in any language. This holds
 * it to that: examples/python/rpc_ping.py (standard library only) talks to an RpcEnv in another
 * process, as a client (handshake, CheckExistence, Ping) and as a peer that Wick asks in turn, by
 * its client-mode address, over the connection the script opened. It finds the cluster secret as
 * every Wick process does; each Python process here gets a config folder of its own
 * (XDG_CONFIG_HOME), so that the secret a master of this test run generated is not found by
 * accident.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type TestContext, test } from 'node:test';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Peer } from '../helpers/peer.js';

const script = fileURLToPath(new URL('../../examples/python/rpc_ping.py', import.meta.url));
const SECRET = 'correct horse battery staple';
const authConf = { 'wick.authenticate.secret': SECRET };
const openConf = { 'wick.authenticate': 'false' };

/** The Python script in its own process; its stdout lines are kept and can be awaited. */
class PythonPeer {
  readonly lines: string[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private readonly waiters: { prefix: string; resolve: (line: string) => void }[] = [];

  constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      this.lines.push(line);
      for (const w of this.waiters.filter((w) => line.startsWith(w.prefix))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line);
      }
    });
  }

  /** The first line starting with `prefix`, whether printed already or later. */
  waitFor(prefix: string): Promise<string> {
    const seen = this.lines.find((l) => l.startsWith(prefix));
    if (seen !== undefined) return Promise.resolve(seen);
    const line = new Promise<string>((resolve) => this.waiters.push({ prefix, resolve }));
    const ended = this.exited.then((code) => {
      throw new Error(
        `rpc_ping.py exited (${code}) before printing "${prefix}…"\nstdout:\n${this.lines.join('\n')}\nstderr:\n${this.stderr}`,
      );
    });
    return Promise.race([line, ended]);
  }

  linesStarting(prefix: string): string[] {
    return this.lines.filter((l) => l.startsWith(prefix));
  }

  /** End of stdin ends --serve. */
  closeStdin(): void {
    this.child.stdin?.end();
  }
}

/** A config folder (XDG_CONFIG_HOME) of its own, with `secret` in its default secret file. */
function configDir(t: TestContext, secret?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-pypeer-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (secret !== undefined) {
    mkdirSync(join(dir, 'wick'));
    writeFileSync(join(dir, 'wick', 'cluster-secret'), `${secret}\n`, { mode: 0o600 });
  }
  return dir;
}

/** rpc_ping.py with `args`, WICK_AUTH_SECRET=`secret` if given, and `env` on top. */
function startPython(
  t: TestContext,
  args: string[],
  secret?: string,
  env: NodeJS.ProcessEnv = {},
): PythonPeer {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: configDir(t), ...env };
  delete childEnv.WICK_AUTH_SECRET;
  if (secret !== undefined) childEnv.WICK_AUTH_SECRET = secret;
  const child = spawn('python3', [script, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: childEnv,
  });
  const py = new PythonPeer(child);
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await py.exited;
  });
  return py;
}

/**
 * Runs the script's whole session against `wick`, including being asked by it; authenticated
 * with WICK_AUTH_SECRET=`secret`, or open (wick.authenticate=false) without one.
 */
async function pingAndBeAsked(
  t: TestContext,
  wick: Peer,
  secret?: string,
  extra: string[] = [],
): Promise<void> {
  const open = secret === undefined ? ['--conf', 'wick.authenticate=false'] : [];
  const py = startPython(t, [wick.address, '--count', '3', '--serve', ...open, ...extra], secret);
  const connected = await py.waitFor('connected ');
  const m = /^connected (\S+) as (client-python-[0-9a-f]{12}) auth=(on|off)$/.exec(connected);
  assert.ok(m, `unexpected line: ${connected}`);
  const [, wickAddress, pyAddress, auth] = m as unknown as [string, string, string, string];
  assert.equal(wickAddress, wick.address);
  assert.equal(auth, secret === undefined ? 'off' : 'on');

  assert.equal(await py.waitFor('serving '), `serving ${pyAddress} python`);
  assert.deepEqual(py.linesStarting('exists '), ['exists Echo']);
  assert.deepEqual(py.linesStarting('pong '), [
    'pong 0 "hello from python #0"',
    'pong 1 "hello from python #1"',
    'pong 2 "hello from python #2"',
  ]);
  assert.ok((await wick.log()).includes(`onConnected:${pyAddress}`));

  // Now Wick is the asker, over the connection Python opened: its verifier, then its endpoint.
  assert.equal(
    (await wick.request({ cmd: 'verify', address: pyAddress, name: 'python' })).ok,
    true,
  );
  const missing = await wick.request({ cmd: 'verify', address: pyAddress, name: 'nobody' });
  assert.equal(missing.ok, false);
  assert.equal(missing.code, -32001);

  const asked = await wick.ask(pyAddress, 'python', {
    type: 'Ping',
    seq: 42,
    payload: 'from node',
  });
  assert.deepEqual(asked, {
    id: asked.id,
    ok: true,
    reply: { type: 'Pong', seq: 42, payload: 'from node' },
  });
  assert.equal(await py.waitFor('answered '), `answered Ping 42 from ${wick.address}`);

  const unsupported = await wick.ask(pyAddress, 'python', { type: 'CheckExistence', name: 'x' });
  assert.equal(unsupported.code, -32002);
  assert.equal(unsupported.error, `Unsupported message CheckExistence from ${wick.address}`);
  const nowhere = await wick.ask(pyAddress, 'nobody', { type: 'Ping', seq: 1 });
  assert.equal(nowhere.code, -32001);
  assert.equal(nowhere.error, `Cannot find endpoint: wick://${pyAddress}/nobody`);

  py.closeStdin();
  assert.equal(await py.exited, 0, py.stderr);
}

test('a Python peer pings a Wick env and answers its asks, without authentication', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: openConf });
  await pingAndBeAsked(t, wick);
});

test('a Python peer pings a Wick env and answers its asks, with authentication', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: authConf });
  await pingAndBeAsked(t, wick, SECRET);
});

test('a Python peer finds the cluster secret as Wick does: in the default secret file, or the file wick.authenticate.secret.file names', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: authConf });
  const byDefault = startPython(t, [wick.address, '--count', '1'], undefined, {
    XDG_CONFIG_HOME: configDir(t, SECRET),
  });
  assert.equal(await byDefault.exited, 0, byDefault.stderr);
  assert.match(byDefault.lines[0] ?? '', /^connected \S+ as client-python-[0-9a-f]{12} auth=on$/);
  assert.deepEqual(byDefault.linesStarting('pong '), ['pong 0 "hello from python #0"']);

  // The file named in the conf comes before WICK_AUTH_SECRET and the default file.
  const file = join(configDir(t, SECRET), 'wick', 'cluster-secret');
  const named = startPython(
    t,
    [wick.address, '--count', '1', '--conf', `wick.authenticate.secret.file=${file}`],
    'not the cluster secret, which the file holds',
    { XDG_CONFIG_HOME: configDir(t, 'nor is this the cluster secret') },
  );
  assert.equal(await named.exited, 0, named.stderr);
  assert.deepEqual(named.linesStarting('pong '), ['pong 0 "hello from python #0"']);

  const missing = startPython(t, [
    wick.address,
    '--conf',
    `wick.authenticate.secret.file=${file}.missing`,
  ]);
  assert.equal(await missing.exited, 2);
  assert.ok(
    missing.stderr.includes(
      `wick.authenticate.secret.file is ${file}.missing, which does not exist`,
    ),
    missing.stderr,
  );
  assert.deepEqual(missing.lines, []);
});

test('a Python peer with the wrong secret is refused, and both sides say why', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: authConf });
  const py = startPython(t, [wick.address], 'not the secret, though long enough');
  assert.equal(await py.exited, 1);
  assert.match(
    py.stderr,
    /^error -32005 Peer \S+ failed authentication: its proof does not match/m,
  );
  assert.deepEqual(py.lines, []);
  // Stopping the env closes whatever it still holds, so its log is complete once it has exited.
  const closed = once(wick.child, 'close');
  await wick.stop();
  await closed;
  assert.match(wick.stderr, /Refused client-python-\S+ \(.*\): it hung up during authentication/);
});

test('a Python peer without the secret is refused by an env that authenticates', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: authConf });
  const py = startPython(t, [wick.address]);
  assert.equal(await py.exited, 1);
  assert.match(py.stderr, /^error -32005 Authentication required/m);
});

test('a Python peer with a secret is refused by an env that runs open', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: openConf });
  const py = startPython(t, [wick.address], SECRET);
  assert.equal(await py.exited, 1);
  assert.match(
    py.stderr,
    /^error -32005 This RpcEnv runs open \(wick\.authenticate=false\): connect without a secret/m,
  );
});

/** The fingerprint of the certificate `address` serves, read by Node's TLS client. */
function servedFingerprint(address: string): Promise<string> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = tls.connect(
      { host: address.slice(0, i), port: Number(address.slice(i + 1)), rejectUnauthorized: false },
      () => {
        const fp = s.getPeerCertificate().fingerprint256.replaceAll(':', '').toLowerCase();
        s.destroy();
        resolve(`sha256:${fp}`);
      },
    );
    s.once('error', reject);
  });
}

// wick.ssl.loopback=true puts loopback under the rules of every other address: the Wick env then
// serves TLS 1.3 and refuses plaintext even from this machine, so a session that works was TLS.
const TLS_ON_LOOPBACK = { 'wick.ssl.loopback': 'true' };

test('over TLS 1.3, a Python peer pins the Wick env, pings it and answers its asks, with authentication and open', async (t) => {
  const [secured, open] = await Promise.all([
    Peer.start(t, { name: 'wick', conf: { ...authConf, ...TLS_ON_LOOPBACK } }),
    Peer.start(t, { name: 'wick', conf: { ...openConf, ...TLS_ON_LOOPBACK } }),
  ]);
  const served = await servedFingerprint(secured.address);
  // The colon-separated upper-case form a browser shows pins as well as sha256:<hex>.
  const colons = (served.slice('sha256:'.length).match(/../g) as string[]).join(':').toUpperCase();
  await pingAndBeAsked(t, secured, SECRET, [
    '--conf',
    'wick.ssl.loopback=true',
    '--conf',
    `wick.ssl.fingerprint=${colons}`,
  ]);
  await pingAndBeAsked(t, open, undefined, [
    '--conf',
    'wick.ssl.loopback=true',
    '--conf',
    `wick.ssl.fingerprint=${await servedFingerprint(open.address)}`,
  ]);
});

test('a Python peer that pins another fingerprint hangs up before the handshake, naming both', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: { ...authConf, ...TLS_ON_LOOPBACK } });
  const served = await servedFingerprint(wick.address);
  const wrong = `sha256:${'ab'.repeat(32)}`;
  const py = startPython(
    t,
    [wick.address, '--conf', 'wick.ssl.loopback=true', '--conf', `wick.ssl.fingerprint=${wrong}`],
    SECRET,
  );
  assert.equal(await py.exited, 1, py.stderr);
  assert.ok(
    py.stderr.includes(
      `error -32005 The master at wick://${wick.address} presented the certificate ${served}, but this process pins ${wrong}`,
    ),
    py.stderr,
  );
  assert.deepEqual(py.lines, []);
  // The same peer with the right pin gets in: the refusal was the pin's, not the wire's.
  const right = startPython(
    t,
    [wick.address, '--count', '1', '--conf', 'wick.ssl.loopback=true'],
    SECRET,
    { WICK_TLS_FINGERPRINT: served },
  );
  assert.equal(await right.exited, 0, right.stderr);
  assert.deepEqual(right.linesStarting('pong '), ['pong 0 "hello from python #0"']);
  // The refused one never got as far as a handshake: the env saw one Python peer, the right one.
  const connected = (await wick.log()).filter((l) => l.startsWith('onConnected:client-python-'));
  assert.equal(connected.length, 1, connected.join('\n'));
});

test('a Python peer that speaks plaintext to a port that requires TLS is told what to do', async (t) => {
  const wick = await Peer.start(t, { name: 'wick', conf: { ...authConf, ...TLS_ON_LOOPBACK } });
  const py = startPython(t, [wick.address], SECRET);
  assert.equal(await py.exited, 1);
  assert.match(
    py.stderr,
    /^error -32005 wick:\/\/\S+ requires TLS 1\.3: .*docs\/protocol\.md, "Encryption"\. The certificate to pin: sha256:[0-9a-f]{64}$/m,
  );
});
