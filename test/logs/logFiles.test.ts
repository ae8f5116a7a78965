/**
 * openLogFile() and readRange(): which file a log request may read (nothing outside the work dir,
 * whatever the ids or links say, and no link as the file itself) and which bytes of it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  DEFAULT_LOG_BYTES,
  type LogSource,
  readLogRange,
  readRange,
  withLogFile,
} from '../../backend/logs/logFiles.js';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';

const SECRET = 'TOP-SECRET-OUTSIDE-THE-WORK-DIR';
const APP = 'app-20261130120000-0001';
const DRIVER = 'driver-20261130120000-0001';

/**
 * root/work holds an executor's and a driver's logs and several links that point out of it;
 * root/outside and root/work-evil (a sibling whose name starts with the work dir's) hold secrets.
 */
function layout(t: { after(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'wick-logfiles-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const work = join(root, 'work');
  const outside = join(root, 'outside');
  const evil = join(root, 'work-evil');
  for (const d of [join(work, APP, '0'), join(work, DRIVER), join(outside, '0'), join(evil, '0')]) {
    mkdirSync(d, { recursive: true });
  }
  writeFileSync(join(work, APP, '0', 'stdout'), 'executor out');
  writeFileSync(join(work, APP, '0', 'stderr'), 'executor err');
  writeFileSync(join(work, DRIVER, 'stdout'), 'driver out');
  for (const d of [outside, evil]) {
    writeFileSync(join(d, 'stdout'), SECRET);
    writeFileSync(join(d, '0', 'stdout'), SECRET);
  }
  // An application dir that is a link to a directory outside.
  symlinkSync(outside, join(work, 'app-link'));
  symlinkSync(evil, join(work, 'app-evil'));
  // An executor dir that is a link outside, and a log file that is one.
  symlinkSync(join(outside, '0'), join(work, APP, '1'));
  mkdirSync(join(work, APP, '2'));
  symlinkSync(join(outside, 'stdout'), join(work, APP, '2', 'stdout'));
  // A driver dir that is a link outside.
  symlinkSync(outside, join(work, 'driver-link'));
  // A link inside the work dir that stays inside it is fine.
  symlinkSync(join(work, APP), join(work, 'app-alias'));
  return { root, work, outside };
}

function refused(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, RpcErrorCode.InvalidParams);
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes(SECRET));
    return true;
  };
}

/** The real path of the file opened for `src` (and closed again). */
const resolveLogPath = (workDir: string, src: LogSource) =>
  withLogFile(workDir, src, async (log) => log.path);

const exec = (appId: string, execId: number, stream = 'stdout'): LogSource =>
  ({ appId, execId, stream }) as LogSource;

test('an executor log and a driver log resolve to their files in the work dir', async (t) => {
  const { work } = layout(t);
  assert.equal(await resolveLogPath(work, exec(APP, 0)), join(work, APP, '0', 'stdout'));
  assert.equal(await resolveLogPath(work, exec(APP, 0, 'stderr')), join(work, APP, '0', 'stderr'));
  assert.equal(
    await resolveLogPath(work, { driverId: DRIVER, stream: 'stdout' }),
    join(work, DRIVER, 'stdout'),
  );
  // A link that stays inside the work dir is followed.
  assert.equal(await resolveLogPath(work, exec('app-alias', 0)), join(work, APP, '0', 'stdout'));
});

test('a work dir reached through a link still serves its logs', async (t) => {
  const { root, work } = layout(t);
  const link = join(root, 'work-link');
  symlinkSync(work, link);
  assert.equal(await resolveLogPath(link, exec(APP, 0)), join(work, APP, '0', 'stdout'));
});

test('ids that could climb out of the work dir are refused, naming the id', async (t) => {
  const { work } = layout(t);
  const badApps = [
    '..',
    '.',
    '../outside',
    `${APP}/../..`,
    '/etc',
    '/',
    'app/..',
    'a\0b',
    '.hidden',
    '',
    'x'.repeat(201),
    'app..',
    'app\\..\\..',
  ];
  for (const appId of badApps) {
    await assert.rejects(
      resolveLogPath(work, exec(appId, 0)),
      refused(/^Invalid application id .*: expected an id such as app-/),
      JSON.stringify(appId),
    );
  }
  for (const driverId of ['..', '../outside', '/etc/passwd', 'driver\0', 'driver/../..']) {
    await assert.rejects(
      resolveLogPath(work, { driverId, stream: 'stdout' }),
      refused(/^Invalid driver id .*: expected an id such as driver-/),
      JSON.stringify(driverId),
    );
  }
});

test('executor ids must be whole numbers', async (t) => {
  const { work } = layout(t);
  for (const execId of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    await assert.rejects(
      resolveLogPath(work, exec(APP, execId)),
      refused(/^Invalid executor id .*: expected a whole number/),
      String(execId),
    );
  }
});

test('only stdout and stderr can be read', async (t) => {
  const { work } = layout(t);
  for (const stream of ['passwd', '../stdout', 'stdout/..', 'stdout\0', '', 'STDOUT']) {
    await assert.rejects(
      resolveLogPath(work, exec(APP, 0, stream)),
      refused(/^Invalid log stream .*: expected "stdout" or "stderr"/),
      JSON.stringify(stream),
    );
  }
});

test('a log is named by appId + execId or by driverId: not both, not neither, not half', async (t) => {
  const { work } = layout(t);
  const sources = [
    { appId: APP, execId: 0, driverId: DRIVER, stream: 'stdout' },
    { appId: APP, driverId: DRIVER, stream: 'stdout' },
    { execId: 0, driverId: DRIVER, stream: 'stdout' },
    { appId: APP, stream: 'stdout' },
    { execId: 0, stream: 'stdout' },
    { stream: 'stdout' },
  ] as LogSource[];
  for (const src of sources) {
    await assert.rejects(
      resolveLogPath(work, src),
      refused(/^A log is named by appId and execId \(an executor\) or by driverId/),
      JSON.stringify(src),
    );
  }
});

test('directory links that point outside the work dir are refused', async (t) => {
  const { work } = layout(t);
  const outsideSources: LogSource[] = [
    exec('app-link', 0),
    exec('app-evil', 0),
    exec(APP, 1),
    { driverId: 'driver-link', stream: 'stdout' },
  ];
  for (const src of outsideSources) {
    await assert.rejects(
      resolveLogPath(work, src),
      refused(/^Refusing to read .*: it resolves outside the work dir$/),
      JSON.stringify(src),
    );
  }
});

test('a log file that is itself a link is never followed, wherever it points', async (t) => {
  const { work } = layout(t);
  // Out of the work dir, and to a real log inside it: both refused, without reading either.
  symlinkSync(join(work, APP, '0', 'stdout'), join(work, APP, '2', 'stderr'));
  for (const stream of ['stdout', 'stderr'] as const) {
    await assert.rejects(
      resolveLogPath(work, exec(APP, 2, stream)),
      refused(
        /^Refusing to read .*\/2\/std(out|err): it is a link \(log files are opened without following links\)$/,
      ),
      stream,
    );
  }
});

test("a FIFO or a directory in a log file's place is refused at once, not waited on", async (t) => {
  const { work } = layout(t);
  mkdirSync(join(work, APP, '3'));
  execFileSync('mkfifo', [join(work, APP, '3', 'stdout')]);
  mkdirSync(join(work, APP, '3', 'stderr'));
  for (const stream of ['stdout', 'stderr'] as const) {
    await assert.rejects(
      resolveLogPath(work, exec(APP, 3, stream)),
      refused(/^Refusing to read .*\/3\/std(out|err): it is not a file$/),
      stream,
    );
  }
});

test('a log that does not exist is InvalidParams too, naming it', async (t) => {
  const { work } = layout(t);
  await assert.rejects(
    resolveLogPath(work, exec(APP, 9)),
    refused(new RegExp(`^No such log: ${APP}/9/stdout in `)),
  );
  await assert.rejects(
    resolveLogPath(work, { driverId: 'driver-20261130120000-0099', stream: 'stderr' }),
    refused(/^No such log: driver-20261130120000-0099\/stderr/),
  );
});

test('readLogRange and readRange: the last 100 KiB by default; offset and length; clamped to the file', async (t) => {
  const { work } = layout(t);
  const path = join(work, APP, '0', 'big');
  const content = Buffer.alloc(300 * 1024);
  for (let i = 0; i < content.length; i++) content[i] = (i * 7 + (i >> 10)) & 0xff;
  writeFileSync(path, content);

  const last = await readLogRange(path, undefined);
  assert.equal(DEFAULT_LOG_BYTES, 100 * 1024);
  assert.equal(last.totalSize, content.length);
  assert.equal(last.offset, content.length - DEFAULT_LOG_BYTES);
  assert.ok(last.data.equals(content.subarray(content.length - DEFAULT_LOG_BYTES)));

  const mid = await readLogRange(path, 1000, 5000);
  assert.deepEqual([mid.offset, mid.data.length, mid.totalSize], [1000, 5000, content.length]);
  assert.ok(mid.data.equals(content.subarray(1000, 6000)));

  const lastFew = await readLogRange(path, undefined, 10);
  assert.ok(lastFew.data.equals(content.subarray(-10)));

  const tail = await readLogRange(path, content.length - 3, 100);
  assert.deepEqual([tail.offset, tail.data.length], [content.length - 3, 3]);

  const beyond = await readLogRange(path, content.length + 50, 100);
  assert.deepEqual([beyond.offset, beyond.data.length], [content.length, 0]);

  const none = await readLogRange(path, 10, 0);
  assert.deepEqual([none.offset, none.data.length, none.totalSize], [10, 0, content.length]);

  const small = await readLogRange(join(work, APP, '0', 'stdout'), undefined);
  assert.deepEqual([small.offset, small.data.toString(), small.totalSize], [0, 'executor out', 12]);
  // The same bytes from the file as openLogFile opens it.
  const opened = await withLogFile(work, exec(APP, 0), (log) => readRange(log.handle, 5, 3));
  assert.deepEqual([opened.offset, opened.data.toString(), opened.totalSize], [5, 'tor', 12]);
});
