import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { EventLogWriter } from '../../backend/eventlog/EventLogWriter.js';
import { type EventLogProblem, readEventLog } from '../../backend/eventlog/readEventLog.js';

/** Events of many shapes: nesting, unicode, escapes, big and small numbers, a long string. */
function events(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    Event: i % 3 === 0 ? 'TaskEnd' : 'StageSubmitted',
    i,
    name: `stage ${i} — ünïcödé \u2028 "quoted" \\ ${'x'.repeat(i % 50)}`,
    metrics: { bytes: i * 1_000_003, ratio: i / 7, big: 2 ** 53 - i, nested: [i, [i, { i }]] },
    empty: i % 5 === 0 ? null : {},
  }));
}

function dir(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'wick-eventlog-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function readAll(path: string, maxLineBytes?: number) {
  const problems: EventLogProblem[] = [];
  const got: unknown[] = [];
  for await (const e of readEventLog(path, {
    onProblem: (p) => problems.push(p),
    ...(maxLineBytes ? { maxLineBytes } : {}),
  }))
    got.push(e);
  return { got, problems };
}

for (const compress of [false, true]) {
  const kind = compress ? 'gzip' : 'plain';

  test(`${kind}: every event round-trips through the file, which loses .inprogress at close`, async (t) => {
    const d = dir(t);
    const w = await EventLogWriter.start({ dir: d, appId: 'app-1', compress, bufferBytes: 4096 });
    const sent = events(2_000);
    for (const e of sent) w.write(e);
    assert.deepEqual(readdirSync(d), [`app-1${compress ? '.gz' : ''}.inprogress`]);
    await w.close();
    assert.deepEqual(readdirSync(d), [`app-1${compress ? '.gz' : ''}`]);
    assert.equal(w.path, join(d, `app-1${compress ? '.gz' : ''}`));
    const { got, problems } = await readAll(w.path);
    assert.deepEqual(problems, []);
    assert.deepEqual(got, sent);
    assert.equal(w.error, undefined);
  });

  test(`${kind}: a rolled log is parts in order and reads whole`, async (t) => {
    const d = dir(t);
    const w = await EventLogWriter.start({
      dir: d,
      appId: 'app-2',
      compress,
      rollAtBytes: 20_000,
      bufferBytes: 1_000,
    });
    const sent = events(1_500);
    for (const e of sent) w.write(e);
    await w.close();
    const names = readdirSync(w.path).sort();
    assert.ok(w.parts > 5, `${w.parts} parts`);
    assert.equal(names.length, w.parts + 1);
    assert.ok(names.includes('appstatus_app-2'), names.join(' '));
    assert.ok(names.includes(`events_1_app-2${compress ? '.gz' : ''}`));
    if (!compress) {
      // No part past its bound, but by the one event that opened it.
      for (const n of names.filter((x) => x.startsWith('events_'))) {
        const size = readFileSync(join(w.path, n)).length;
        assert.ok(size <= 20_000, `${n}: ${size} bytes`);
      }
    }
    const { got, problems } = await readAll(w.path);
    assert.deepEqual(problems, []);
    assert.deepEqual(got, sent);
  });

  test(`${kind}: a writer killed mid-run leaves a readable prefix`, async (t) => {
    const d = dir(t);
    // A real process writes and flushes, and is SIGKILLed while it writes on.
    const script = `
      import { EventLogWriter } from ${JSON.stringify(resolve('backend/eventlog/EventLogWriter.ts'))};
      const w = await EventLogWriter.start({ dir: process.argv[1], appId: 'app-k', compress: ${compress}, bufferBytes: 512 });
      let i = 0;
      for (;;) {
        for (let j = 0; j < 50; j++) w.write({ i: i++, pad: 'p'.repeat(i % 200) });
        await w.flush();
        if (i === 5000) console.log('flushed 5000');
      }`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, d],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((r) => {
      child.stdout.on('data', (b: Buffer) => {
        if (b.toString().includes('flushed 5000')) r();
      });
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const [name] = readdirSync(d);
    assert.match(name ?? '', /\.inprogress$/);
    const { got, problems } = await readAll(join(d, name ?? ''));
    assert.ok(got.length >= 5000, `read ${got.length} events`);
    got.forEach((e, i) => {
      assert.equal((e as { i: number }).i, i);
    });
    // A kill lands between flushes or inside one: either way no problem but a cut last line.
    for (const p of problems) assert.equal(p.truncated, true, p.message);
  });

  test(`${kind}: a file cut inside a line reads up to the break and says where`, async (t) => {
    const d = dir(t);
    const w = await EventLogWriter.start({ dir: d, appId: 'app-3', compress, bufferBytes: 1 });
    const sent = events(300);
    for (const e of sent) w.write(e);
    await w.close();
    const whole = readFileSync(w.path);
    const cut = join(d, `app-3-cut${compress ? '.gz' : ''}`);
    // Plain: into the middle of the last line. Gzip: into the middle of the last flushed block.
    writeFileSync(cut, whole.subarray(0, whole.length - (compress ? 60 : 20)));
    const { got, problems } = await readAll(cut);
    assert.ok(got.length >= sent.length - 2 && got.length < sent.length, `read ${got.length}`);
    assert.deepEqual(got, sent.slice(0, got.length));
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.equal(problems[0]?.truncated, true);
    assert.equal(problems[0]?.file, cut);
    assert.equal(problems[0]?.line, got.length + 1);
  });
}

test('a line that is not JSON is named with its file and line, and the rest is skipped', async (t) => {
  const d = dir(t);
  const f = join(d, 'app-4');
  writeFileSync(f, '{"a":1}\n{"a":2}\nnot json\n{"a":3}\n');
  const { got, problems } = await readAll(f);
  assert.deepEqual(got, [{ a: 1 }, { a: 2 }]);
  assert.equal(problems.length, 1);
  assert.equal(problems[0]?.line, 3);
  assert.equal(problems[0]?.truncated, false);
  assert.match(problems[0]?.message ?? '', /line 3 is not a JSON event/);
});

test('a rolled log with a part missing is refused by name', async (t) => {
  const d = dir(t);
  const w = await EventLogWriter.start({
    dir: d,
    appId: 'app-5',
    compress: false,
    rollAtBytes: 1_000,
  });
  for (const e of events(200)) w.write(e);
  await w.close();
  rmSync(join(w.path, 'events_2_app-5'));
  const { got, problems } = await readAll(w.path);
  assert.deepEqual(got, []);
  assert.match(problems[0]?.message ?? '', /misses part events_2_app-5/);
});

test('a line past the bound ends the read instead of filling memory', async (t) => {
  const d = dir(t);
  const f = join(d, 'app-6');
  // 64 KiB of one line with no newline, after one good event.
  writeFileSync(f, `{"ok":true}\n${'['.repeat(64 * 1024)}`);
  const { got, problems } = await readAll(f, 1024);
  assert.deepEqual(got, [{ ok: true }]);
  assert.match(problems[0]?.message ?? '', /line 2 is longer than 1024 bytes/);
});

test('a log is never written over, and an id that is no file name is refused', async (t) => {
  const d = dir(t);
  const w = await EventLogWriter.start({ dir: d, appId: 'app-7', compress: false });
  await w.close();
  await assert.rejects(
    EventLogWriter.start({ dir: d, appId: 'app-7', compress: false }),
    /the event log .*app-7 exists already/,
  );
  await assert.rejects(
    EventLogWriter.start({ dir: d, appId: '../etc', compress: false }),
    /application id of letters, digits.*got "\.\.\/etc"/,
  );
});

test('a write error is kept and reported once; the application goes on', async (t) => {
  const d = dir(t);
  const errors: Error[] = [];
  const w = await EventLogWriter.start({
    dir: join(d, 'sub'),
    appId: 'app-8',
    compress: false,
    rollAtBytes: 100,
    onError: (e) => errors.push(e),
  });
  w.write({ first: 1 });
  await w.flush();
  // The folder goes: the next part cannot be made.
  rmSync(join(d, 'sub'), { recursive: true, force: true });
  for (const e of events(50)) w.write(e);
  await w.flush();
  assert.equal(errors.length, 1);
  assert.ok(w.error);
  // Later events are dropped without a word: the application is not the log's.
  w.write({ after: 'the error' });
  await w.close();
  assert.equal(errors.length, 1);
});
