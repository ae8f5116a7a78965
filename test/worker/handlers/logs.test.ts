/**
 * Clients ↔ Worker, the logs: RequestLogRange and FollowLog / LogChunk / LogFollowEnded /
 * StopFollowLog through a real Worker endpoint, asked over loopback from a client-mode RpcEnv as
 * `wick logs` does. A follow of a child writing 50 MB loses and repeats no byte (a hash on both
 * sides, offsets contiguous); bad ids are refused with InvalidParams and nothing outside the work
 * dir is ever read.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { bytesOf } from '../../../backend/protocol/base64.js';
import type { MessageOf } from '../../../backend/protocol/registry.js';
import {
  FollowLog,
  LogChunk,
  LogFollowEnded,
  type LogFollowStarted,
  RequestLogRange,
  StopFollowLog,
} from '../../../backend/protocol/worker.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  RpcEnv,
  RpcError,
  RpcErrorCode,
} from '../../../backend/rpc/index.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { waitFor } from '../../helpers/processes.js';
import { testProtocol } from '../../helpers/protocol.js';
import {
  app,
  driverLaunch,
  MockMaster,
  nodeApp,
  registeredWorker,
  type TestWorker,
} from '../../helpers/workerHarness.js';

checkNothingLeftRunning();

const APP = 'app-20261130120000-0001';
const SECRET = 'TOP-SECRET-OUTSIDE-THE-WORK-DIR';

/** Receives one follow's chunks and checks, as they come, that each starts where the last ended. */
class FollowReceiver extends RpcEndpoint {
  next: number;
  bytes = 0;
  chunks = 0;
  readonly hash = createHash('sha256');
  readonly problems: string[] = [];
  readonly data: Buffer[] = [];
  ended: MessageOf<typeof LogFollowEnded> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    readonly followId: string,
    from: number,
    private readonly keep = false,
  ) {
    super();
    this.next = from;
    this.on(LogChunk, (c) => {
      if (c.followId === this.followId) this.chunk(c);
      this.wake?.();
    });
    this.on(LogFollowEnded, (e) => {
      if (e.followId === this.followId) this.ended = e;
      this.wake?.();
    });
  }

  private chunk(c: MessageOf<typeof LogChunk>): void {
    if (this.ended) this.problems.push(`chunk at ${c.offset} after the end`);
    if (c.offset !== this.next) this.problems.push(`chunk at ${c.offset}, expected ${this.next}`);
    const data = bytesOf(c, 'data');
    if (data.length === 0) this.problems.push(`empty chunk at ${c.offset}`);
    this.hash.update(data);
    if (this.keep) this.data.push(data);
    this.next = c.offset + data.length;
    this.bytes += data.length;
    this.chunks++;
  }

  /** Resolves once `done` holds; re-checked on every message. */
  async until(done: () => boolean): Promise<void> {
    while (!done()) await new Promise<void>((r) => (this.wake = r));
  }
}

interface Client {
  env: RpcEnv;
  worker: RpcEndpointRef;
  /** Starts a follow; resolves once the worker answered LogFollowStarted. */
  follow(
    source: { appId?: string; execId?: number; driverId?: string; stream: 'stdout' | 'stderr' },
    offset?: number,
    keep?: boolean,
  ): Promise<{ r: FollowReceiver; started: MessageOf<typeof LogFollowStarted> }>;
}

/** A client-mode env (as `wick logs` uses) with a ref to the worker. */
async function client(t: TestContext, w: TestWorker): Promise<Client> {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'logsClient', clientMode: true });
  t.after(() => env.stop());
  const worker = await env.setupEndpointRef(w.env.address, 'Worker');
  let n = 0;
  return {
    env,
    worker,
    async follow(source, offset = 0, keep = false) {
      const followId = `follow-${++n}`;
      const r = new FollowReceiver(followId, offset, keep);
      const ref = env.setupEndpoint(`Follower${n}`, r);
      const started = await worker.ask(
        FollowLog({ ...source, followId, offset, follower: ref.toData() }),
      );
      return { r, started };
    },
  };
}

async function setup(t: TestContext) {
  const m = await MockMaster.start(t);
  const w = await registeredWorker(t, m);
  const c = await client(t, w);
  return { m, w, c };
}

function isInvalidParams(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, RpcErrorCode.InvalidParams, err.message);
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes(SECRET));
    return true;
  };
}

test('RequestLogRange: the last 100 KiB by default, or offset + length, with the total size', async (t) => {
  const { m, w, c } = await setup(t);
  // 300 KiB of known bytes on stdout.
  await m.launchRunning(
    APP,
    0,
    nodeApp(
      "const b = Buffer.alloc(300 * 1024); for (let i = 0; i < b.length; i++) b[i] = 65 + (i % 26); require('fs').writeSync(1, b)",
    ),
  );
  await m.executorState(APP, 0, 'EXITED');
  const expected = readFileSync(join(w.workDir, APP, '0', 'stdout'));
  assert.equal(expected.length, 300 * 1024);

  const last = await c.worker.ask(RequestLogRange({ appId: APP, execId: 0, stream: 'stdout' }));
  assert.equal(last.totalSize, 300 * 1024);
  assert.equal(last.offset, 200 * 1024);
  assert.equal(last.length, 100 * 1024);
  assert.ok(Buffer.from(last.data, 'base64').equals(expected.subarray(200 * 1024)));

  const mid = await c.worker.ask(
    RequestLogRange({ appId: APP, execId: 0, stream: 'stdout', offset: 5, length: 1000 }),
  );
  assert.deepEqual([mid.offset, mid.length, mid.totalSize], [5, 1000, 300 * 1024]);
  assert.ok(Buffer.from(mid.data, 'base64').equals(expected.subarray(5, 1005)));

  const past = await c.worker.ask(
    RequestLogRange({ appId: APP, execId: 0, stream: 'stdout', offset: 10 ** 9 }),
  );
  assert.deepEqual([past.offset, past.length, past.data], [300 * 1024, 0, '']);

  const err = await c.worker.ask(
    RequestLogRange({ appId: APP, execId: 0, stream: 'stderr', offset: 0 }),
  );
  assert.match(Buffer.from(err.data, 'base64').toString(), /^Wick Executor Command: /);
});

test("a driver's log is read by its id", async (t) => {
  const { m, w, c } = await setup(t);
  const appPath = join(w.root, 'driver.js');
  writeFileSync(appPath, "console.log('driver says hi')");
  const driverId = 'driver-20261130120000-0001';
  m.worker().send(driverLaunch(driverId, appPath));
  await m.rec.next('DriverStateChanged', (x) => x.state === 'FINISHED');
  const out = await c.worker.ask(RequestLogRange({ driverId, stream: 'stdout' }));
  assert.equal(Buffer.from(out.data, 'base64').toString(), 'driver says hi\n');
  const err = await c.worker.ask(RequestLogRange({ driverId, stream: 'stderr' }));
  assert.match(Buffer.from(err.data, 'base64').toString(), /^Launch Command: /);
});

test("a driver's logs exist as soon as its worker takes it: asked at once, they are there, empty", async (t) => {
  const { m, w } = await setup(t);
  const appPath = join(w.root, 'quiet.js');
  writeFileSync(appPath, 'setTimeout(() => {}, 200)');
  const driverId = 'driver-20261130120000-0009';
  m.worker().send(driverLaunch(driverId, appPath));
  // The master reports a driver RUNNING when it places it: a client may ask right after.
  const out = await m.worker().ask(RequestLogRange({ driverId, stream: 'stdout' }));
  assert.equal(out.totalSize, 0);
  await m.rec.next('DriverStateChanged', (x) => x.state === 'FINISHED');
});

test("a supervised driver's follow spans its relaunches and ends saying how the driver ended", async (t) => {
  const { m, w, c } = await setup(t);
  // Run 1 waits for a file named go (so the follow starts during it) and fails; run 2 succeeds.
  const appPath = join(w.root, 'flaky.js');
  writeFileSync(
    appPath,
    `const fs = require('fs');
    const run = (fs.existsSync('runs') ? Number(fs.readFileSync('runs', 'utf8')) : 0) + 1;
    fs.writeFileSync('runs', String(run));
    console.log('run ' + run);
    const wait = setInterval(() => {
      if (run > 1 || fs.existsSync('go')) { clearInterval(wait); process.exitCode = run < 2 ? 1 : 0; }
    }, 5);`,
  );
  const driverId = 'driver-20261130120000-0002';
  m.worker().send(driverLaunch(driverId, appPath, { supervise: true }));
  const dir = join(w.workDir, driverId);
  const out = join(dir, 'stdout');
  await waitFor(
    'run 1 to write its line',
    () => existsSync(out) && readFileSync(out, 'utf8') === 'run 1\n',
  );
  const { r } = await c.follow({ driverId, stream: 'stdout' }, 0, true);
  writeFileSync(join(dir, 'go'), '');
  await waitFor(
    'the relaunch back-off',
    () => w.worker.runners.driver(driverId)?.state === 'RELAUNCHING',
  );
  w.clock.advance(1000);
  await r.until(() => r.ended !== undefined);
  assert.deepEqual(r.problems, []);
  assert.equal(Buffer.concat(r.data).toString(), 'run 1\nrun 2\n');
  assert.equal(r.ended?.reason, 'process exited: driver FINISHED with exit code 0 after 2 runs');
  assert.equal(r.ended?.totalSize, 12);
});

test('a follow of a child writing 50 MB loses and repeats no byte, and ends once it has exited', async (t) => {
  const { m, w, c } = await setup(t);
  // Waits for a file named go, then writes 50 MB of random bytes in chunks of random sizes,
  // yielding between them; the hash of what it wrote goes to a file of its own.
  const script = `
    const fs = require('fs'), crypto = require('crypto');
    const total = 50 * 1024 * 1024, h = crypto.createHash('sha256');
    let written = 0;
    const step = () => {
      if (written >= total) { fs.writeFileSync('hash', h.digest('hex')); return; }
      for (let i = 0; i < 4 && written < total; i++) {
        const n = Math.min(total - written, 1 + crypto.randomInt(256 * 1024));
        const b = crypto.randomBytes(n);
        fs.writeSync(1, b);
        h.update(b);
        written += n;
      }
      setImmediate(step);
    };
    const wait = setInterval(() => { if (fs.existsSync('go')) { clearInterval(wait); step(); } }, 5);`;
  await m.launchRunning(APP, 0, nodeApp(script));
  const dir = join(w.workDir, APP, '0');
  const { r, started } = await c.follow({ appId: APP, execId: 0, stream: 'stdout' });
  assert.equal(started.totalSize, 0);
  writeFileSync(join(dir, 'go'), '');
  await r.until(() => r.ended !== undefined);

  assert.deepEqual(r.problems, []);
  assert.equal(r.ended?.reason, 'process exited');
  assert.equal(r.ended?.totalSize, 50 * 1024 * 1024);
  assert.equal(r.bytes, 50 * 1024 * 1024);
  assert.ok(r.chunks > 1, `${r.chunks} chunk(s)`);
  const digest = r.hash.digest('hex');
  assert.equal(digest, readFileSync(join(dir, 'hash'), 'utf8'), 'what the child wrote');
  assert.equal(
    digest,
    createHash('sha256')
      .update(readFileSync(join(dir, 'stdout')))
      .digest('hex'),
    'what is in the file',
  );
  // The executor's end was reported before the follow ended.
  assert.ok(m.rec.all('ExecutorStateChanged').some((x) => x.state === 'EXITED'));
});

test('a follow from an offset starts there; one of a finished process ends at once', async (t) => {
  const { m, c } = await setup(t);
  await m.launchRunning(APP, 0, nodeApp("process.stdout.write('0123456789abcdef')"));
  await m.executorState(APP, 0, 'EXITED');
  const { r, started } = await c.follow({ appId: APP, execId: 0, stream: 'stdout' }, 10, true);
  assert.equal(started.totalSize, 16);
  await r.until(() => r.ended !== undefined);
  assert.deepEqual(r.problems, []);
  assert.equal(Buffer.concat(r.data).toString(), 'abcdef');
  assert.deepEqual([r.ended?.reason, r.ended?.totalSize], ['process exited', 16]);
});

test('StopFollowLog stops a follow: LogFollowEnded, then no more chunks', async (t) => {
  const { m, w, c } = await setup(t);
  await m.launchRunning(
    APP,
    0,
    nodeApp("let i = 0; setInterval(() => console.log('line ' + i++), 5)"),
  );
  const { r } = await c.follow({ appId: APP, execId: 0, stream: 'stdout' });
  await r.until(() => r.bytes > 0);
  c.worker.send(StopFollowLog({ followId: r.followId }));
  await r.until(() => r.ended !== undefined);
  assert.equal(r.ended?.reason, 'stopped by the follower');
  assert.equal(r.ended?.totalSize, r.next);
  const chunks = r.chunks;
  // The child keeps writing; a round trip to the worker shows nothing more was pushed.
  const size = () =>
    c.worker.ask(RequestLogRange({ appId: APP, execId: 0, stream: 'stdout', length: 0 }));
  const before = (await size()).totalSize;
  await waitFor('the child to write more', async () => (await size()).totalSize > before, t.signal);
  assert.equal(r.chunks, chunks);
  assert.deepEqual(r.problems, []);
  // The executor is still running: only the follow stopped.
  assert.equal((await w.state()).executors[0]?.state, 'RUNNING');
});

test('bad ids and streams are refused with InvalidParams; nothing outside the work dir is read', async (t) => {
  const { m, w, c } = await setup(t);
  await m.launchRunning(APP, 0, app(['sleep', '300']));
  // Secrets outside the work dir, and links in it that point at them.
  const outside = join(w.root, 'outside');
  mkdirSync(join(outside, '0'), { recursive: true });
  writeFileSync(join(outside, 'stdout'), SECRET);
  writeFileSync(join(outside, '0', 'stdout'), SECRET);
  writeFileSync(join(w.root, 'stdout'), SECRET);
  symlinkSync(outside, join(w.workDir, 'app-link'));
  symlinkSync(outside, join(w.workDir, 'driver-link'));
  mkdirSync(join(w.workDir, APP, '7'));
  symlinkSync(join(outside, 'stdout'), join(w.workDir, APP, '7', 'stdout'));

  type Src = Record<string, unknown>;
  const cases: [Src, RegExp][] = [
    [{ appId: '..', execId: 0, stream: 'stdout' }, /Invalid application id/],
    [{ appId: '../outside', execId: 0, stream: 'stdout' }, /Invalid application id/],
    [{ appId: `${APP}/../..`, execId: 0, stream: 'stdout' }, /Invalid application id/],
    [{ appId: w.root, execId: 0, stream: 'stdout' }, /Invalid application id/],
    [{ appId: `${APP}\0`, execId: 0, stream: 'stdout' }, /Invalid application id/],
    [{ driverId: '..', stream: 'stdout' }, /Invalid driver id/],
    [{ driverId: '../../outside', stream: 'stdout' }, /Invalid driver id/],
    [{ driverId: join(outside, 'x'), stream: 'stdout' }, /Invalid driver id/],
    [{ appId: 'app-link', execId: 0, stream: 'stdout' }, /resolves outside the work dir/],
    [{ driverId: 'driver-link', stream: 'stdout' }, /resolves outside the work dir/],
    [
      { appId: APP, execId: 7, stream: 'stdout' },
      /it is a link \(log files are opened without following links\)/,
    ],
    [{ appId: APP, execId: 0, driverId: 'driver-link', stream: 'stdout' }, /not both/],
    [{ appId: APP, stream: 'stdout' }, /appId and execId/],
    [{ stream: 'stdout' }, /appId and execId/],
    [{ appId: APP, execId: 3, stream: 'stdout' }, /No such log/],
    // Refused by the message schema before any handler runs.
    [{ appId: APP, execId: 0, stream: '../../stdout' }, /Invalid params/],
    [{ appId: APP, execId: 0, stream: 'passwd' }, /Invalid params/],
    [{ appId: APP, execId: -1, stream: 'stdout' }, /Invalid params/],
    [{ appId: '', execId: 0, stream: 'stdout' }, /Invalid params/],
  ];
  const follower = c.env.setupEndpoint('Nobody', new FollowReceiver('x', 0));
  for (const [src, pattern] of cases) {
    const what = JSON.stringify(src);
    await assert.rejects(
      c.worker.ask({ type: 'RequestLogRange', ...src }),
      isInvalidParams(pattern),
      `RequestLogRange ${what}`,
    );
    await assert.rejects(
      c.worker.ask({
        type: 'FollowLog',
        ...src,
        followId: 'bad',
        offset: 0,
        follower: follower.toData(),
      }),
      isInvalidParams(pattern),
      `FollowLog ${what}`,
    );
  }
  // The worker is fine afterwards, and its real logs are served as before.
  const ok = await c.worker.ask(RequestLogRange({ appId: APP, execId: 0, stream: 'stderr' }));
  assert.ok(ok.totalSize > 0);
});

test('a follower that disconnects has its follow stopped: no watcher or file left open', async (t) => {
  const { m, w } = await setup(t);
  await m.launchRunning(APP, 0, nodeApp("setInterval(() => console.log('tick'), 5)"));
  const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
  const before = watchers();
  const c = await client(t, w);
  const { r } = await c.follow({ appId: APP, execId: 0, stream: 'stdout' });
  await r.until(() => r.bytes > 0);
  assert.equal(watchers(), before + 1);
  await c.env.stop();
  await waitFor('the follow to stop', () => watchers() === before, t.signal);
  assert.equal((await w.state()).executors[0]?.state, 'RUNNING');
});
