/**
 * An application's code and files shipped to its executors, on a real local cluster (a master
 * and 2 workers × 2 cores) shared by this file, with applications written to a temp folder and
 * run by `wick submit`: tasks use what their modules import (a TypeScript helper, a CommonJS and
 * an ES npm package from the app's node_modules, JSON) and the entry's own functions; they
 * resolve them from the fetched tree, which is fetched once per worker into the application's
 * local dir and gone when it ends; --files (both deploy modes) and wc.addFile reach tasks through
 * WickFiles.get; a function holding a local object is still refused by name.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AppDir, appIdIn, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import { runWick } from '../helpers/cli.js';
import { waitFor } from '../helpers/processes.js';

let cluster: SharedCluster;
const apps = new AppDir();
const localDir = mkdtempSync(join(tmpdir(), 'wick-test-local-'));

before(async () => {
  cluster = await startSharedCluster({
    workers: 2,
    cores: 2,
    memory: '2g',
    conf: { 'wick.local.dir': localDir },
  });
});

after(async () => {
  await cluster?.stop();
  apps.remove();
  rmSync(localDir, { recursive: true, force: true });
});

function submit(args: string[]) {
  return runWick(['submit', '--master', cluster.url, '--executor-memory', '512m', ...args], {
    mark: cluster.mark,
  });
}

/** The JSON line an application printed last. */
function resultOf(stdout: string): Record<string, unknown> {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  assert.ok(line, `no JSON line in:\n${stdout}`);
  return JSON.parse(line);
}

function write(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** The application's local dirs on the workers (wick.local.dir), which hold the fetched code. */
const localDirsOf = (appId: string) =>
  readdirSync(localDir).filter((d) => d.startsWith(`wick-executor-${appId}-`));

/** Waits until every worker removed its dirs of a FINISHED application; fails naming those left. */
async function assertLocalDirsRemoved(appId: string): Promise<void> {
  await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  for (const w of cluster.workers) {
    await w.waitForStderr(new RegExp(`Cleaning up local directories for application ${appId}`));
  }
  await waitFor(`the local dirs of ${appId} to go`, () => localDirsOf(appId).length === 0, 10_000);
}

const app = `
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createServer } from 'node:net';
import { WickContext, WickFiles } from 'wick';
import { shift } from './lib/math';
import { triple } from 'tiny-cjs';
import { negate } from 'tiny-esm';
import config from './data.json';

function describe(x: number): string {
  return \`\${x}→\${shift(x)}\`;
}

const wc = await WickContext.create({ appName: 'shipped code' });
const xs = [1, 2, 3, 4];
const on = <T>(f: (x: number) => T) => wc.parallelize(xs, 4).map(f).collect();
const out: Record<string, unknown> = {
  shifted: await on((x: number) => shift(x)),
  tripled: await on((x: number) => triple(x)),
  negated: await on((x: number) => negate(x)),
  bonus: await on((x: number) => x + config.bonus),
  described: await on((x: number) => describe(x)),
  // Where an executor found the package and what is in the app's local dir there.
  resolved: await on(() => require.resolve('tiny-cjs')),
  local: await on(() => readdirSync(dirname(WickFiles.getRootDirectory() as string)).sort()),
};
// A function holding a local object (a socket) is refused by name before anything runs.
async function withServer(): Promise<unknown> {
  const server = createServer();
  try {
    return await on((x: number) => (server.listening ? x : -x));
  } catch (err) {
    return (err as Error).message;
  } finally {
    server.close();
  }
}
out.socket = await withServer();
console.log(JSON.stringify(out));
await wc.stop();
`;

test('tasks use an imported TypeScript helper, CommonJS and ES npm packages, JSON and entry functions, from the fetched tree, fetched once per worker', {
  timeout: 90_000,
}, async () => {
  const dir = join(apps.path, 'shipped');
  write(dir, {
    'lib/math.ts':
      'const OFFSET: number = 1000;\nexport function shift(x: number): number {\n  return x + OFFSET;\n}\n',
    'node_modules/tiny-cjs/package.json':
      '{ "name": "tiny-cjs", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/tiny-cjs/index.js': 'exports.triple = (x) => x * 3;\n',
    'node_modules/tiny-esm/package.json':
      '{ "name": "tiny-esm", "version": "1.0.0", "type": "module", "exports": "./index.js" }\n',
    'node_modules/tiny-esm/index.js': 'export function negate(x) {\n  return -x;\n}\n',
    'data.json': '{ "bonus": 7 }\n',
    'app.ts': app,
  });
  // One executor per core: two executors of the app on each worker.
  const r = await submit(['--executor-cores', '1', join(dir, 'app.ts')]);
  assert.equal(r.code, 0, r.stderr);
  const out = resultOf(r.stdout);
  assert.deepEqual(out.shifted, [1001, 1002, 1003, 1004]);
  assert.deepEqual(out.tripled, [3, 6, 9, 12]);
  assert.deepEqual(out.negated, [-1, -2, -3, -4]);
  assert.deepEqual(out.bonus, [8, 9, 10, 11]);
  assert.deepEqual(out.described, ['1→1001', '2→1002', '3→1003', '4→1004']);
  // The package came from the executor's copy of the tree, not from the app's folder.
  for (const p of out.resolved as string[]) {
    assert.match(
      p,
      new RegExp(
        `^${localDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/wick-executor-app-\\S+/code-[0-9a-f]{24}/node_modules/tiny-cjs/index\\.js$`,
      ),
    );
  }
  // The code and nothing else (no partial fetch left; no files folder: nothing was added).
  for (const l of out.local as string[][]) {
    assert.deepEqual(
      l.map((n) => n.replace(/^code-[0-9a-f]{24}$/, 'code-…')),
      ['code-…'],
    );
  }
  assert.match(
    out.socket as string,
    /^The function given to map uses server, which executors would not have: functions travel as source text without their surroundings/,
  );

  const appId = appIdIn(r.stderr) as string;
  assert.ok(appId, r.stderr);
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  const executors = cluster.watch.app(s, appId)?.removedExecutors ?? [];
  assert.equal(executors.length, 4);
  for (const w of cluster.workers) {
    assert.equal(executors.filter((e) => e.workerId === w.workerId).length, 2, w.workerId);
  }
  // Four executors, two workers: each worker's code was fetched once, by one of its executors,
  // however many of them got that far (a short job may end before a late executor registers).
  const logOf = (id: number) => {
    const path = join(cluster.workDir, appId, String(id), 'stderr');
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  };
  for (const w of cluster.workers) {
    const logs = executors.filter((e) => e.workerId === w.workerId).map((e) => logOf(e.id));
    const fetches = logs.filter((l) =>
      /Fetched the application's code from \S+: \d+ files/.test(l),
    );
    const registered = logs.filter((l) => /Successfully registered with driver/.test(l));
    assert.ok(
      fetches.length <= 1,
      `${w.workerId}: fetched by one executor at most\n${logs.join('\n')}`,
    );
    if (registered.length > 0) assert.equal(fetches.length, 1, logs.join('\n'));
  }
  assert.ok(
    executors.some((e) => /Successfully registered with driver/.test(logOf(e.id))),
    'an executor ran the tasks',
  );
  await assertLocalDirsRemoved(appId);
  await cluster.assertOnlyClusterLeft();
});

/** Reads the added files in each task, through a helper module of its own. */
const readsFiles = (name: string) => `
import { readFileSync } from 'node:fs';
import { WickContext, WickFiles } from 'wick';
import { firstLine } from './helper';
const wc = await WickContext.create({ appName: '${name}' });
const read = await wc
  .parallelize([1, 2, 3, 4], 4)
  .map(() => [firstLine(WickFiles.get('words.txt')), firstLine(WickFiles.get('n.csv'))])
  .collect();
console.log(JSON.stringify({ read, driver: firstLine(WickFiles.get('words.txt')) }));
await wc.stop();
`;

const helper = `import { readFileSync } from 'node:fs';
export const firstLine = (path: string): string => readFileSync(path, 'utf8').split('\\n')[0] as string;
`;

test('--files in client mode: each task reads them at WickFiles.get(name)', {
  timeout: 60_000,
}, async () => {
  const dir = join(apps.path, 'files-client');
  write(dir, {
    'words.txt': 'hello files\n',
    'data/n.csv': '1,2,3\n',
    'helper.ts': helper,
    'app.ts': readsFiles('files client'),
  });
  const r = await submit([
    '--files',
    `${join(dir, 'words.txt')},${join(dir, 'data', 'n.csv')}`,
    join(dir, 'app.ts'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const out = resultOf(r.stdout);
  assert.deepEqual(out.read, Array(4).fill(['hello files', '1,2,3']));
  assert.equal(out.driver, 'hello files');
  const appId = appIdIn(r.stderr) as string;
  assert.match(cluster.executorOutput(appId, 'stderr'), /Fetched the application's code/);
  await assertLocalDirsRemoved(appId);
  await cluster.assertOnlyClusterLeft();
});

test('--files in cluster mode: the driver runs on a worker from what the master kept, and its tasks read them', {
  timeout: 60_000,
}, async () => {
  const dir = join(apps.path, 'files-cluster');
  write(dir, {
    'words.txt': 'hello cluster\n',
    'n.csv': '4,5,6\n',
    'helper.ts': helper,
    'app.ts': readsFiles('files cluster'),
  });
  const r = await submit([
    '--deploy-mode',
    'cluster',
    '--wait',
    '--files',
    `${join(dir, 'words.txt')},${join(dir, 'n.csv')}`,
    join(dir, 'app.ts'),
  ]);
  const driverLog = () => {
    const id = r.stdout.split('\n')[0] as string;
    const at = join(cluster.workDir, id, 'stderr');
    const apps = readdirSync(cluster.workDir).filter((d) => d.startsWith('app-'));
    const execs = apps.map((a) => `${a}:\n${cluster.executorOutput(a, 'stderr')}`).join('\n');
    return `${existsSync(at) ? readFileSync(at, 'utf8') : `no ${at}`}\n${execs}`;
  };
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}\ndriver:\n${driverLog()}`);
  const out = resultOf(r.stdout);
  assert.deepEqual(out.read, Array(4).fill(['hello cluster', '4,5,6']));
  assert.equal(out.driver, 'hello cluster');
  const driverId = r.stdout.split('\n')[0] as string;
  assert.match(driverId, /^driver-/);
  assert.match(r.stderr, /Uploading \d+ of the application's \d+ files/);
  const s = await cluster.watch.waitFor(
    (s) => cluster.watch.driver(s, driverId)?.state === 'FINISHED',
  );
  assert.equal(s.activeApps.length, 0);
  await cluster.assertOnlyClusterLeft();
});

test('wc.addFile after a first job: the registered executors fetch it before the next job’s tasks run', {
  timeout: 60_000,
}, async () => {
  const dir = join(apps.path, 'add-file');
  write(dir, {
    'app.ts': `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WickContext, WickFiles } from 'wick';
const wc = await WickContext.create({ appName: 'add file' });
const first = await wc.parallelize([1, 2, 3, 4], 4).map((x: number) => x * 2).collect();
const path = join(${JSON.stringify(dir)}, 'late.txt');
writeFileSync(path, 'added late\\n');
await wc.addFile(path);
const second = await wc
  .parallelize([1, 2, 3, 4], 4)
  .map((x: number) => \`\${x} \${readFileSync(WickFiles.get('late.txt'), 'utf8').trim()}\`)
  .collect();
console.log(JSON.stringify({ first, second }));
await wc.stop();
`,
  });
  const r = await submit([join(dir, 'app.ts')]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(resultOf(r.stdout), {
    first: [2, 4, 6, 8],
    second: ['1 added late', '2 added late', '3 added late', '4 added late'],
  });
  const appId = appIdIn(r.stderr) as string;
  // One executor per worker (all its cores), each fetched the file after it had registered.
  assert.equal(
    cluster.executorOutput(appId, 'stderr').match(/Fetched late\.txt \(11 bytes\) from /g)?.length,
    2,
  );
  await assertLocalDirsRemoved(appId);
  await cluster.assertOnlyClusterLeft();
});

/**
 * textFile by the name a file was shipped under (--files, relative to where the submit runs) or
 * added under (wc.addFile), as WickFiles.get takes it: its executors read their own copy, and
 * the name means the added file even where the driver runs has another of that name. In cluster
 * mode the driver runs in a folder of its worker, where no words.txt is but the one shipped.
 */
const readsShippedText = (name: string) => `
import { mkdirSync, writeFileSync } from 'node:fs';
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: '${name}' });
// The added file, by its name, wins over another of that name where the driver runs.
mkdirSync('sub', { recursive: true });
writeFileSync('sub/more.txt', 'x y\\nz\\n');
writeFileSync('more.txt', 'not this one\\n');
await wc.addFile('sub/more.txt');
const words = async (file: string) =>
  (await wc.textFile(file, 3).flatMap((line: string) => line.split(' ')).collect()).sort();
console.log(JSON.stringify({ shipped: await words('words.txt'), added: await words('more.txt') }));
await wc.stop();
`;

for (const mode of ['client', 'cluster'] as const) {
  test(`textFile('words.txt') after --files words.txt, and of a file added with wc.addFile, in ${mode} mode`, {
    timeout: 60_000,
  }, async () => {
    const dir = join(apps.path, `text-by-name-${mode}`);
    write(dir, {
      'words.txt': 'a b\nc d e\nf\n',
      'app.ts': readsShippedText(`text by name ${mode}`),
    });
    const r = await runWick(
      [
        'submit',
        '--master',
        cluster.url,
        '--executor-memory',
        '512m',
        ...(mode === 'cluster' ? ['--deploy-mode', 'cluster', '--wait'] : []),
        '--files',
        'words.txt',
        'app.ts',
      ],
      { mark: cluster.mark, cwd: dir },
    );
    assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
    assert.deepEqual(resultOf(r.stdout), {
      shipped: ['a', 'b', 'c', 'd', 'e', 'f'],
      added: ['x', 'y', 'z'],
    });
    await cluster.watch.waitFor((s) => s.activeApps.length === 0 && s.activeDrivers.length === 0);
    // Its workers clean its local dirs up once the master says it finished.
    await waitFor(
      'the application’s local dirs to go',
      () => readdirSync(localDir).filter((d) => d.startsWith('wick-executor-')).length === 0,
      10_000,
    );
    await cluster.assertOnlyClusterLeft();
  });
}

test('after the application ends, no local dir of it is left on the workers', () => {
  // Each test above checked its own application's dirs; none of any application is left.
  assert.deepEqual(
    readdirSync(localDir).filter((d) => d.startsWith('wick-executor-')),
    [],
  );
  assert.equal(existsSync(localDir), true);
});
