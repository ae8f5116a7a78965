/**
 * Where the cluster secret goes (issue 17, finding 7's secret that did not reach executors, and
 * "Roles with their own credentials"; docs/protocol.md, "Where the secret comes from"). The
 * secret is given to the master and the workers each of the three ways — `--conf
 * wick.authenticate.secret=…`, `--conf wick.authenticate.secret.file=…`, WICK_AUTH_SECRET — and
 * to `wick submit` the same way. In each, the cluster works (SparkPi, and two applications whose
 * jobs wait at a gate while the test looks at their processes), a peer without that secret is
 * refused, and the secret reaches no process but those that hold it by role: no executor (spawned
 * fresh, or a standby process that became one) and no cluster-mode driver has it in its
 * environment or command line, each has a key of its own instead (WICK_APP_CREDENTIAL, derived
 * from the secret for its application or submission), and neither the master's state (/json,
 * `wick status --json`, the state pushed to subscribers) nor the executors' logs hold it.
 *
 * Why test/security/ mirrors no one source file: see worker.test.ts.
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AppDir, appIdIn, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import { markedProcesses, runWick, startWick, type WickProcess } from '../helpers/cli.js';
import { assertExactAnswer, GatedApp } from '../helpers/gatedApp.js';
import { cmdlineOf, confArgs, environOf, refusedAtHandshake } from '../helpers/hostile.js';
import { RawClient } from '../helpers/peer.js';
import { waitFor } from '../helpers/processes.js';

const apps = new AppDir();
const secretDir = mkdtempSync(join(tmpdir(), 'wick-test-secret-'));
const pi = join(import.meta.dirname, '..', '..', 'examples', 'pi.ts');
after(() => {
  apps.remove();
  rmSync(secretDir, { recursive: true, force: true });
});

/** One way to give every process the secret: its settings, or its environment. */
interface Way {
  name: string;
  secret: string;
  conf: Record<string, string>;
  env: Record<string, string>;
}

function ways(): Way[] {
  const fresh = () => randomBytes(24).toString('base64url');
  const inConf = fresh();
  const inFile = fresh();
  const inEnv = fresh();
  const file = join(secretDir, 'cluster-secret');
  writeFileSync(file, `${inFile}\n`, { mode: 0o600 });
  return [
    {
      name: '--conf wick.authenticate.secret',
      secret: inConf,
      conf: { 'wick.authenticate.secret': inConf },
      env: {},
    },
    {
      name: '--conf wick.authenticate.secret.file',
      secret: inFile,
      conf: { 'wick.authenticate.secret.file': file },
      env: {},
    },
    { name: 'WICK_AUTH_SECRET', secret: inEnv, conf: {}, env: { WICK_AUTH_SECRET: inEnv } },
  ];
}

for (const way of ways()) describe(`the secret through ${way.name}`, () => secretSuite(way));

function derivedKey(secret: string, kind: 'app' | 'submission', id: string): string {
  return createHmac('sha256', secret).update(`wick-${kind}-key:${id}`).digest('hex');
}

function secretSuite(way: Way): void {
  const tag = way.name.replace(/\W+/g, '-');
  let cluster: SharedCluster;
  const client = new GatedApp(apps, `client${tag}`);
  const clustered = new GatedApp(apps, `cluster${tag}`);
  let clientSubmit: WickProcess;
  let clusterSubmit: WickProcess;
  const submitArgs = () => ['submit', '--master', cluster.url, ...confArgs(way.conf)];

  before(
    async () => {
      cluster = await startSharedCluster({
        workers: 2,
        cores: 3,
        conf: way.conf,
        // Worker 0 spawns every executor; worker 1 hands a launch to its standby executor process.
        workerConf: (i): Record<string, string> =>
          i === 0 ? { 'wick.worker.executor.prestart': 'false' } : {},
        env: way.env,
        watchConf: { 'wick.authenticate.secret': way.secret },
      });
      const small = [
        '--executor-memory',
        '256m',
        '--driver-memory',
        '256m',
        '--executor-cores',
        '1',
      ];
      clientSubmit = startWick(
        [...submitArgs(), ...small, '--total-executor-cores', '2', ...client.args],
        {
          mark: cluster.mark,
          env: way.env,
        },
      );
      clusterSubmit = startWick(
        [
          ...submitArgs(),
          ...small,
          '--total-executor-cores',
          '2',
          '--deploy-mode',
          'cluster',
          '--wait',
          ...clustered.args,
        ],
        { mark: cluster.mark, env: way.env },
      );
      // Both applications have two executors running their tasks (one on each worker).
      await cluster.watch.waitFor(
        (s) =>
          s.activeDrivers.some((d) => d.state === 'RUNNING') &&
          [client.name, clustered.name].every(
            (name) =>
              s.activeApps
                .find((a) => a.name === name)
                ?.executors.filter((e) => e.state === 'RUNNING').length === 2,
          ),
      );
      const s = await cluster.watch.waitFor(() => true);
      await waitFor('the tasks of both applications running', () =>
        s.activeApps.every(
          (a) => (cluster.executorOutput(a.id).match(/Running task/g) ?? []).length === 2,
        ),
      );
    },
    { timeout: 60_000 },
  );

  after(async () => {
    client.open();
    clustered.open();
    await Promise.all([clientSubmit?.exited, clusterSubmit?.exited]);
    await cluster?.stop();
  });

  test('a peer without this secret is refused; one with it gets in', async (t) => {
    assert.match(
      await refusedAtHandshake(t, cluster.master.address, { kind: 'stranger' }),
      /^Authentication required/,
    );
    assert.match(
      await refusedAtHandshake(t, cluster.master.address, { kind: 'guesser' }),
      /^Authentication failed/,
    );
    const raw = await RawClient.connect(cluster.master.address, t);
    assert.deepEqual((await raw.authHello('client-test-secret', way.secret)).result, { ok: true });
    raw.close();
  });

  test('no executor and no cluster-mode driver holds the secret; each holds its own key', async () => {
    const s = await cluster.watch.waitFor(() => true);
    // Every process of the run but those given the secret on purpose: the daemons, and the
    // submitter's own `wick submit` (with the tool it bundles applications with, esbuild).
    const given = new Set([
      cluster.master.pid,
      ...cluster.workers.map((w) => w.pid),
      clientSubmit.pid,
      clusterSubmit.pid,
    ]);
    const children = markedProcesses(cluster.mark).filter(
      (p) => !given.has(p.pid) && !/esbuild/.test(p.cmdline),
    );
    const appIds = new Map(s.activeApps.map((a) => [a.name, a.id]));
    const driverId = s.activeDrivers[0]?.id as string;
    const seen = { executors: 0, withKey: 0, drivers: 0 };
    for (const p of children) {
      const environ = environOf(p.pid);
      const argv = cmdlineOf(p.pid);
      const what = `${p.pid} ${argv.join(' ')}`;
      assert.ok(
        !environ.some((e) => e.startsWith('WICK_AUTH_SECRET=')),
        `WICK_AUTH_SECRET in the environment of ${what}`,
      );
      assert.ok(
        !environ.some((e) => e.includes(way.secret)),
        `the secret in the environment of ${what}`,
      );
      assert.ok(
        !argv.some((a) => a.includes(way.secret) || a.includes('wick.authenticate.secret')),
        `the secret on the command line of ${what}`,
      );
      // A confined process runs under bwrap (two of its processes, wick.executor.sandbox): they
      // were checked above, and the process they run is counted below.
      if (/(^|\/)bwrap$/.test(argv[0] ?? '')) continue;
      const credential = environ.find((e) => e.startsWith('WICK_APP_CREDENTIAL='))?.split('=')[1];
      // A standby that became an executor shows its launch as one string (its process title).
      const appId = / --app-id (\S+)/.exec(argv.join(' '))?.[1];
      if (appId !== undefined) {
        seen.executors++;
        // A standby process got its key with its launch, on its stdin: its environment at
        // start-up was the worker's, less the secret.
        if (credential !== undefined) {
          seen.withKey++;
          assert.equal(credential, `app:${appId}:${derivedKey(way.secret, 'app', appId)}`, what);
        }
      } else if (argv.includes('driver-wrapper')) {
        seen.drivers++;
        assert.equal(
          credential,
          `submission:${driverId}:${derivedKey(way.secret, 'submission', driverId)}`,
          what,
        );
      }
    }
    assert.deepEqual(
      { executors: seen.executors, drivers: seen.drivers },
      { executors: 4, drivers: 1 },
      children.map((p) => p.cmdline).join('\n'),
    );
    // Worker 0's two, spawned fresh, carry their key in their environment.
    assert.ok(seen.withKey >= 2, JSON.stringify(seen));
    assert.equal(appIds.size, 2);
  });

  test('the master’s state and the executors’ logs do not hold the secret', async () => {
    const json = await (
      await fetch(`${cluster.master.webUiUrl}/json`, {
        headers: { authorization: `Bearer ${way.secret}` },
      })
    ).text();
    assert.match(json, /"activeapps"/);
    assert.ok(!json.includes(way.secret), 'the secret in /json');
    const status = await runWick(['status', '--json', '--master', cluster.url], {
      env: { WICK_AUTH_SECRET: way.secret },
    });
    assert.equal(status.code, 0, status.stderr);
    assert.ok(!status.stdout.includes(way.secret), 'the secret in wick status --json');
    const pushed = JSON.stringify(await cluster.watch.waitFor(() => true));
    assert.match(pushed, new RegExp(clustered.name));
    assert.ok(!pushed.includes(way.secret), 'the secret in the state pushed to subscribers');
    for (const a of (await cluster.watch.waitFor(() => true)).activeApps) {
      for (const stream of ['stdout', 'stderr'] as const) {
        const out = cluster.executorOutput(a.id, stream);
        assert.ok(
          out.length > 0 && !out.includes(way.secret),
          `the secret in the ${stream} of ${a.id}'s executors`,
        );
      }
    }
    for (const d of [cluster.master, ...cluster.workers]) {
      assert.ok(!d.stderr.includes(way.secret), `the secret in the log of ${d.label}`);
    }
  });

  test('the applications end with the exact answer, and SparkPi runs', {
    timeout: 60_000,
  }, async () => {
    client.open();
    clustered.open();
    const [c, d] = await Promise.all([clientSubmit.exited, clusterSubmit.exited]);
    assert.equal(c.code, 0, clientSubmit.stderr());
    assertExactAnswer(clientSubmit.stdout());
    assert.equal(d.code, 0, clusterSubmit.stderr());
    assertExactAnswer(clusterSubmit.stdout());
    const r = await runWick([...submitArgs(), pi, '10'], { mark: cluster.mark, env: way.env });
    assert.equal(r.code, 0, r.stderr);
    const m = /Pi is roughly (\d+\.\d+)/.exec(r.stdout);
    assert.ok(m && Math.abs(Number(m[1]) - Math.PI) < 0.01, r.stdout);
    assert.ok(appIdIn(r.stderr));
    await cluster.assertOnlyClusterLeft();
  });
}
