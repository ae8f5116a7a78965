/**
 * An application that exists only on the user's host, run on workers that have never seen it:
 * its tasks call its own TypeScript module, an npm package from its node_modules, a JSON file it
 * imports and a function of its main file, and read a file shipped with --files. The app is
 * written into the user's host's own /tmp by the very shell that submits it, so no other host can
 * read it but through Wick. In cluster mode the user's host reaches only the master (the workers'
 * addresses are black holes there): the submit uploads the app to the master, a worker fetches
 * it from there, a supervised driver relaunched on the other worker fetches it again, and every
 * log is read through the master.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { AppSummary } from '../../backend/protocol/state.js';
import { type HostProcess, hostsUnavailable, startHosts, wickInOwnTmp } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';

const run = promisify(execFile);

/** The app: every file it has, by its path under its folder. */
const APP: Record<string, string> = {
  'app.ts': `
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { WickContext, WickFiles } from 'wick';
import pad from 'zero-pad';
import settings from './settings.json';
import { scale } from './lib/scale';

function label(x: number): string {
  return pad(scale(x) + settings.offset, 4);
}

/** The address of the host a task runs on (each simulated host has one, on e0). */
function where(): string {
  return networkInterfaces().e0?.find((a) => a.family === 'IPv4')?.address ?? '?';
}

const wc = await WickContext.create({ appName: 'shipping' });
const job = () =>
  wc
    .parallelize([1, 2, 3, 4], 4)
    .map((x) => \`\${label(x)}:\${readFileSync(WickFiles.get('words.txt'), 'utf8').trim()}@\${where()}\`)
    .collect();
// The second worker's executors may register after the first job has run: the job runs again
// (each answer printed) until tasks have run on two hosts, or for 30 s.
const hosts = new Set<string>();
const until = Date.now() + 30_000;
do {
  const rows = await job();
  console.log(\`RESULT \${rows.map((r) => r.split('@')[0]).join(' ')}\`);
  for (const r of rows) hosts.add(r.split('@')[1]);
  if (hosts.size < 2) await new Promise((r) => setTimeout(r, 100));
} while (hosts.size < 2 && Date.now() < until);
console.log(\`HOSTS \${[...hosts].sort().join(' ')}\`);
if (process.argv[2] === 'linger') await new Promise((r) => setTimeout(r, 600_000));
await wc.stop();
`,
  'lib/scale.ts': `
const FACTOR: number = 10;
export function scale(x: number): number {
  return x * FACTOR;
}
`,
  'settings.json': '{ "offset": 7 }\n',
  'words.txt': 'hello\n',
  'node_modules/zero-pad/package.json':
    '{ "name": "zero-pad", "version": "1.0.0", "main": "index.js" }\n',
  'node_modules/zero-pad/index.js':
    "module.exports = function pad(n, width) { return String(n).padStart(width, '0'); };\n",
};

/** 10·x + 7, zero-padded, with the shipped file's word. */
const EXPECTED = 'RESULT 0017:hello 0027:hello 0037:hello 0047:hello';

async function finished(p: HostProcess): Promise<{ code: number | null; stdout: string }> {
  const end = await p.closed;
  return { code: end.code, stdout: p.stdout };
}

test('client mode: tasks use the app’s module, npm package, JSON and file on hosts that never saw it', {
  skip: hostsUnavailable(),
  timeout: 180_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  const w1 = await net.host('w1').startWorker(master.url, { cores: 2 });
  const w2 = await net.host('w2').startWorker(master.url, { cores: 2 });
  const submit = wickInOwnTmp(net.host('user'), APP, [
    'submit',
    '--master',
    master.url,
    '--executor-cores',
    '1',
    '--executor-memory',
    '128m',
    '--files',
    '/tmp/app/words.txt',
    '/tmp/app/app.ts',
  ]);
  const end = await finished(submit);
  assert.equal(end.code, 0, submit.stderr);
  assert.match(end.stdout, new RegExp(EXPECTED));
  for (const line of end.stdout.split('\n').filter((l) => l.startsWith('RESULT ')))
    assert.equal(line, EXPECTED, 'every run of the job gives the answer');
  const hosts = /HOSTS (.*)/.exec(end.stdout)?.[1]?.split(' ');
  assert.deepEqual(hosts, [w1.address, w2.address].map((a) => a.split(':')[0]).sort());

  // Two executors of the app on each worker, one fetch of its code per worker.
  const appId = /app ID (app-\S+)/.exec(submit.stderr)?.[1] as string;
  const status = await net.host('user').wick(['status', '--json', '--master', master.url, appId]);
  const app = JSON.parse(status.stdout) as AppSummary;
  const byWorker = new Map<string, number[]>();
  for (const e of app.removedExecutors)
    byWorker.set(e.workerId, [...(byWorker.get(e.workerId) ?? []), e.id]);
  assert.equal(byWorker.size, 2, status.stdout);
  for (const [workerId, ids] of byWorker) {
    assert.equal(ids.length, 2, `two executors on ${workerId}: ${status.stdout}`);
    let fetches = 0;
    for (const id of ids) {
      const log = await net
        .host('user')
        .wick(['logs', '--master', master.url, `${appId}/${id}`, '--stderr']);
      assert.equal(log.code, 0, log.stderr);
      if (/Fetched the application's code from/.test(log.stdout)) fetches++;
    }
    assert.equal(fetches, 1, `one of the app's executors on ${workerId} fetched its code`);
  }
});

test('cluster mode from a host that reaches only the master: uploaded, fetched, relaunched elsewhere, logs through the master', {
  skip: hostsUnavailable(),
  timeout: 240_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const conf = { 'wick.worker.timeout': '2s' };
  const master = await net.host('master').startMaster({ conf });
  // Three cores: the first run's application lives on until its driver's connection drops (a
  // cut link does not tell), and it asks a new executor for one lost with the cut worker; the
  // relaunched driver and its own executor need the other two.
  const workers = [
    await net.host('w1').startWorker(master.url, { cores: 3, conf }),
    await net.host('w2').startWorker(master.url, { cores: 3, conf }),
  ];
  const user = net.host('user');
  for (const w of ['w1', 'w2']) {
    await run('ip', ['-n', user.netns, 'route', 'add', 'blackhole', `${net.host(w).address}/32`]);
  }

  const submit = wickInOwnTmp(user, APP, [
    'submit',
    '--master',
    master.url,
    '--deploy-mode',
    'cluster',
    '--supervise',
    '--total-executor-cores',
    '1',
    '--executor-cores',
    '1',
    '--executor-memory',
    '128m',
    '--driver-memory',
    '128m',
    '--files',
    '/tmp/app/words.txt',
    '/tmp/app/app.ts',
    'linger',
  ]);
  const end = await finished(submit);
  assert.equal(end.code, 0, submit.stderr);
  assert.match(submit.stderr, /Uploading \d+ of the application's \d+ files/);
  const driverId = /^(driver-\S+)$/m.exec(end.stdout)?.[1] as string;
  assert.ok(driverId, end.stdout);

  const state = async () => {
    const r = await user.wick(['status', '--json', '--master', master.url]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as {
      activedrivers: { id: string; state: string; workerId?: string; relaunchedFrom?: string }[];
    };
  };
  // The run to look at: the submitted one, then the one that relaunched it under a new id.
  let runId = driverId;
  const driverLog = async () => {
    const r = await user.wick(['logs', '--master', master.url, runId]);
    return r.code === 0 ? r.stdout : '';
  };
  const placedOn = async (not?: string) =>
    waitFor(
      'the driver RUNNING on a worker',
      async () => {
        const drivers = (await state()).activedrivers;
        const d =
          drivers.find((x) => x.id === runId) ?? drivers.find((x) => x.relaunchedFrom === runId);
        if (d) runId = d.id;
        return d?.state === 'RUNNING' && d.workerId && d.workerId !== not ? d.workerId : undefined;
      },
      t.signal,
    );

  const first = await placedOn();
  await waitFor(
    'the first run’s answer',
    async () => (await driverLog()).includes(EXPECTED),
    t.signal,
  );
  const logs = await user.wick(['logs', '--master', master.url, driverId]);
  assert.match(logs.stderr, /through the master/);

  // The driver's worker host goes away: the master relaunches the supervised driver on the other.
  const firstHost = workers.find((w) => w.workerId === first) as (typeof workers)[number];
  const cutHost = firstHost === workers[0] ? net.host('w1') : net.host('w2');
  await cutHost.cut();
  const second = await placedOn(first);
  assert.notEqual(second, first);
  // Its log is now the other worker's (the cut one is out of reach): the second run's answer.
  await waitFor(
    'the relaunched run’s answer, on the other worker',
    async () => (await driverLog()).includes(EXPECTED),
    t.signal,
  );
  const kill = await user.wick(['kill', '--master', master.url, driverId]);
  assert.equal(kill.code, 0, kill.stderr);
  assert.notEqual(runId, driverId, 'the relaunch has an id of its own');
  await waitFor(
    'the driver KILLED',
    async () => (await state()).activedrivers.length === 0,
    t.signal,
  );
});
