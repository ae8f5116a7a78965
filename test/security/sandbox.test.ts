/**
 * The snooping application (issue 28, "An application's processes see only what is theirs"): its
 * cluster-mode driver and its tasks look for the cluster secret where a thief would — the default
 * secret file, the secret file the worker was given, the worker's work dir, $HOME, and the
 * environment and command line of every process they can see in /proc — and list the worker's
 * work dir for other applications' dirs. The worker is started each documented way: the secret
 * in its environment (the join line of old), a secret file named in its settings, the default
 * file a master on the same machine made. Confined (wick.executor.sandbox=bwrap) they find
 * nothing and see no dir but their own; the same snoop with wick.executor.sandbox=none finds the
 * secret every way (the negative control: the snoop works, so the first half can fail).
 *
 * The snoop is given the secret's SHA-256, never the secret: it hashes every token it reads.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AppDir, processMarker, startSharedCluster } from '../helpers/apps.js';
import { isAlive, runWick, startWick } from '../helpers/cli.js';
import { GatedApp } from '../helpers/gatedApp.js';
import { confArgs } from '../helpers/hostile.js';
import { waitFor } from '../helpers/processes.js';

const apps = new AppDir();
const secretDir = mkdtempSync(join(tmpdir(), 'wick-test-snoop-secret-'));
after(() => {
  apps.remove();
  rmSync(secretDir, { recursive: true, force: true });
});

/** What one snooping process reports. */
interface Seen {
  found: string[];
  /** The command line of each process it was found in. */
  whose: string[];
  read: number;
  processes: number;
  workDirEntries: string[];
  /** The inodes of what it sees in `<work dir>/.prestart`. */
  prestart: number[];
  /** Its working dir's inode and device. */
  cwdIno: number;
  cwdDev: number;
  /** The device of its application's first local dir (tasks only). */
  localDev?: number;
}

/**
 * Runs in the driver and, as source, in each task: where it finds a token whose SHA-256 is the
 * secret's. Plain JavaScript (a string), as it runs in the application.
 */
const SNOOP = `function snoop(a) {
  const fs = require('node:fs');
  const path = require('node:path');
  const crypto = require('node:crypto');
  const found = [];
  const whose = [];
  let read = 0;
  const check = (where, text) => {
    read++;
    for (const tok of text.split(/[\\s=\\0"',:;]+/)) {
      if (tok.length >= 16 && crypto.createHash('sha256').update(tok).digest('hex') === a.hash) {
        found.push(where);
        // Whose it was, for the message of a failure.
        const pid = where.startsWith('/proc/') ? where.split('/')[2] : undefined;
        if (pid) whose.push(pid + ': ' + (readText('/proc/' + pid + '/cmdline') || '').split('\\0').join(' ').slice(0, 160));
        return;
      }
    }
  };
  const readText = (p) => {
    try { return fs.readFileSync(p, 'latin1'); } catch { return undefined; }
  };
  let procs = [];
  try { procs = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)); } catch {}
  for (const pid of procs) {
    for (const f of ['environ', 'cmdline']) {
      const t = readText('/proc/' + pid + '/' + f);
      if (t !== undefined) check('/proc/' + pid + '/' + f, t);
    }
  }
  let budget = 3000;
  const walk = (p, depth) => {
    if (--budget < 0 || path.basename(p) === 'node_modules') return;
    let st;
    try { st = fs.statSync(p); } catch { return; }
    if (st.isDirectory() && depth < 6) {
      let entries = [];
      try { entries = fs.readdirSync(p); } catch {}
      for (const e of entries.slice(0, 300)) walk(path.join(p, e), depth + 1);
    } else if (st.isFile() && st.size < 1 << 20) {
      const t = readText(p);
      if (t !== undefined) check(p, t);
    }
  };
  for (const p of a.paths) walk(p, 0);
  let workDirEntries = [];
  try { workDirEntries = fs.readdirSync(a.workDir); } catch {}
  // An executor that was a worker's standby sees its dir where it was when it started.
  let prestart = [];
  try {
    prestart = fs.readdirSync(path.join(a.workDir, '.prestart'))
      .map((n) => fs.statSync(path.join(a.workDir, '.prestart', n)).ino);
  } catch {}
  // Its application's local dir, where its code and shuffle files go: a dir of the host's (the
  // test keeps it on the work dir's filesystem), not a path made up in the sandbox's own tmpfs.
  let localDev;
  const local = (process.env.WICK_EXECUTOR_DIRS || '').split(':')[0];
  try { if (local) localDev = fs.statSync(local).dev; } catch {}
  const cwd = fs.statSync('.');
  return { found, whose, read, processes: procs.length, workDirEntries, prestart, cwdIno: cwd.ino, cwdDev: cwd.dev, localDev };
}`;

const SOURCE = `
import { WickContext } from 'wick';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const src = ${JSON.stringify(SNOOP)};
const snoop = eval('(' + src + ')');
const args = JSON.parse(process.argv[2]);
const wc = await WickContext.create({ appName: 'snoop' });
const driver = snoop(args);
const tasks = await wc
  .parallelize([1, 2], 2)
  .map((x, env) => eval('(' + env.src + ')')(env.args), { src, args })
  .collect();
console.log('SNOOP ' + JSON.stringify({ driver, tasks }));
await wc.stop();
`;
const snoopApp = apps.write('snoop.mjs', SOURCE);

interface Way {
  name: string;
  /** The daemons' settings and environment; the secret they hold. */
  setUp(): { conf: Record<string, string>; env: Record<string, string>; secret?: string };
}

const fresh = () => randomBytes(24).toString('base64url');
const WAYS: Way[] = [
  {
    name: 'WICK_AUTH_SECRET in the environment (the join line of old)',
    setUp: () => {
      const secret = fresh();
      return { conf: {}, env: { WICK_AUTH_SECRET: secret }, secret };
    },
  },
  {
    name: 'a secret file named in the settings',
    setUp: () => {
      const secret = fresh();
      const file = join(secretDir, `secret-${fresh().slice(0, 6)}`);
      writeFileSync(file, `${secret}\n`, { mode: 0o600 });
      return { conf: { 'wick.authenticate.secret.file': file }, env: {}, secret };
    },
  },
  {
    name: "the default secret file a master made on the worker's machine",
    setUp: () => ({ conf: {}, env: {} }),
  },
];

/** The default secret file of this test file's processes (test/helpers/configPerFile.mjs). */
const defaultSecretFile = () =>
  join(process.env.XDG_CONFIG_HOME ?? join(os.homedir(), '.config'), 'wick', 'cluster-secret');

for (const [wayIndex, way] of WAYS.entries()) {
  describe(`worker given the secret by ${way.name}`, () => {
    for (const mode of ['bwrap', 'none'] as const) {
      test(`wick.executor.sandbox=${mode}`, { timeout: 120_000 }, async () => {
        // The default file is made by the first master of this file: a fresh one each run.
        rmSync(defaultSecretFile(), { force: true });
        const { conf, env, secret: given } = way.setUp();
        const cluster = await startSharedCluster({
          workers: 1,
          cores: 2,
          conf: {
            ...conf,
            'wick.executor.sandbox': mode,
            // The first way without the standby executor, so that a freshly confined executor
            // is snooped too; the others' executors are their worker's standby (prestart.ts).
            ...(wayIndex === 0 ? { 'wick.worker.executor.prestart': 'false' } : {}),
          },
          env,
          watchConf: given ? { 'wick.authenticate.secret': given } : undefined,
        });
        let decoy: ReturnType<typeof spawn> | undefined;
        try {
          const secret = given ?? readFileSync(defaultSecretFile(), 'utf8').trim();
          const hash = createHash('sha256').update(secret).digest('hex');
          // Open, a process that is not Wick's holds the secret in its environment, unmasked.
          decoy =
            mode === 'none' && env.WICK_AUTH_SECRET
              ? spawn('sleep', ['120'], { env: { WICK_AUTH_SECRET: secret }, stdio: 'ignore' })
              : undefined;
          // The secret files first: the walk of a large $HOME stops at a budget.
          const paths = [
            ...(conf['wick.authenticate.secret.file']
              ? [conf['wick.authenticate.secret.file']]
              : []),
            defaultSecretFile(),
            cluster.workDir,
            os.homedir(),
          ];
          // Not runWick, whose 30 s guard an open snoop of every process and $HOME can pass on
          // a loaded machine: the test's own timeout bounds it.
          const p = startWick(
            [
              'submit',
              '--master',
              cluster.url,
              ...confArgs(conf),
              '--deploy-mode',
              'cluster',
              '--wait',
              '--executor-memory',
              '256m',
              '--driver-memory',
              '256m',
              snoopApp,
              JSON.stringify({ hash, workDir: cluster.workDir, paths }),
            ],
            { mark: cluster.mark, env },
          );
          p.child.stdin?.end();
          const exit = await p.exited;
          assert.equal(exit.code, 0, p.stderr());
          const driverDir = readdirSync(cluster.workDir).find((d) => d.startsWith('driver-'));
          assert.ok(driverDir, `a driver dir in ${cluster.workDir}`);
          const out = readFileSync(join(cluster.workDir, driverDir, 'stdout'), 'utf8');
          const m = /^SNOOP (.*)$/m.exec(out);
          assert.ok(m, `the snoop's report in the driver's stdout:\n${out}`);
          const seen = JSON.parse(m[1] as string) as { driver: Seen; tasks: Seen[] };
          const all = [seen.driver, ...seen.tasks];
          const appDir = readdirSync(cluster.workDir).find((d) => d.startsWith('app-'));
          assert.ok(appDir && existsSync(join(cluster.workDir, appDir)));
          if (mode === 'bwrap') {
            for (const s of all) {
              assert.deepEqual(s.found, [], `the secret found: ${JSON.stringify(s)}`);
              // Something was read (its own /proc at least), so the empty answer means something.
              assert.ok(s.read > 0 && s.processes > 0, JSON.stringify(s));
              // Its own PID namespace: bwrap's init, itself, and a task's helpers at most.
              assert.ok(s.processes <= 4, `${s.processes} processes visible`);
            }
            // Each sees of the work dir its own dir only (and, for a task, the root of its
            // application's local dirs, which the test's workers keep in the work dir: `local`).
            // An executor that was the worker's standby (wick.worker.executor.prestart) sees it
            // where it was when it started, `.prestart/<its own>`: the same dir, by inode.
            assert.deepEqual(seen.driver.workDirEntries, [driverDir]);
            const execDirs = readdirSync(join(cluster.workDir, appDir));
            const execInodes = execDirs.map((e) => statSync(join(cluster.workDir, appDir, e)).ino);
            for (const t of seen.tasks) {
              const shown = t.workDirEntries.filter((e) => e !== 'local');
              if (shown[0] === '.prestart') {
                assert.deepEqual(shown, ['.prestart']);
                assert.equal(t.prestart.length, 1, JSON.stringify(t));
                assert.equal(t.prestart[0], t.cwdIno);
              } else {
                assert.deepEqual(shown, [appDir]);
              }
              assert.ok(
                execInodes.includes(t.cwdIno),
                `its cwd is its executor's dir: ${execDirs}`,
              );
              assert.equal(t.localDev, t.cwdDev, 'its local dir is on the host');
            }
          } else if (decoy) {
            // Open, with the secret given in the daemons' environments: they masked it there
            // (backend/cli/startupSecrets.ts), as did the submit, so every process finds it in
            // the decoy's environment and nowhere else — which shows the snoop does find it.
            for (const s of all) {
              assert.deepEqual(s.found, [`/proc/${decoy.pid}/environ`], JSON.stringify(s));
            }
          } else {
            // The negative control: open, every process finds it (a file or another process).
            for (const s of all) assert.notDeepEqual(s.found, [], JSON.stringify(s));
            assert.ok(
              seen.tasks.every((t) => t.workDirEntries.includes(driverDir)),
              "open, a task sees the driver's dir beside its own",
            );
          }
        } finally {
          decoy?.kill();
          await cluster.stop();
        }
      });
    }
  });
}

test('killing a confined application kills every process in its sandboxes: none is left', {
  timeout: 120_000,
}, async () => {
  const cluster = await startSharedCluster({
    workers: 1,
    cores: 2,
    conf: { 'wick.executor.sandbox': 'bwrap' },
  });
  try {
    const gated = new GatedApp(apps, 'killed-while-confined');
    const submit = startWick(
      ['submit', '--master', cluster.url, '--executor-memory', '256m', ...gated.args],
      { mark: cluster.mark },
    );
    const s = await cluster.watch.waitFor((st) =>
      st.activeApps.some(
        (a) => a.name === gated.name && a.executors.some((e) => e.state === 'RUNNING'),
      ),
    );
    const app = s.activeApps.find((a) => a.name === gated.name);
    assert.ok(app);
    await waitFor(
      'its tasks running',
      () => (cluster.executorOutput(app.id).match(/Running task/g) ?? []).length === 2,
    );
    // The executor runs under bwrap: bwrap, its PID namespace's init, and Node inside — all of
    // one launch's marker (a standby's bwrap keeps the standby's command line: prestart.ts).
    const others = cluster.others();
    const markers = new Set(
      others
        .filter((p) => / executor .*--app-id /.test(p.cmdline))
        .map((p) => processMarker(p.pid)),
    );
    markers.delete(undefined);
    const confined = others.filter((p) => markers.has(processMarker(p.pid)));
    assert.ok(
      confined.some((p) => /^\S*bwrap /.test(p.cmdline)) &&
        confined.some((p) => !/bwrap/.test(p.cmdline.split(' ')[0] ?? '')),
      confined.map((p) => p.cmdline.slice(0, 120)).join('\n'),
    );
    const k = await runWick(['kill', app.id, '--master', cluster.url]);
    assert.equal(k.code, 0, k.stderr);
    await submit.exited;
    await cluster.watch.waitFor((st) => !st.activeApps.some((a) => a.id === app.id));
    // Every process of the sandboxes is gone, the inner ones included (found by the run's mark).
    await cluster.assertOnlyClusterLeft();
    for (const p of confined) assert.ok(!isAlive(p.pid), `${p.pid} ${p.cmdline.slice(0, 120)}`);
  } finally {
    await cluster.stop();
  }
});
