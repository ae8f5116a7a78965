import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { leaderOf, waitForWorkers } from '../client/clusterReady.js';
import { defaultPropertiesFiles, readPropertiesFile } from '../conf/load.js';
import { WickConf } from '../conf/WickConf.js';

export interface LocalClusterOptions {
  workers: number;
  cores: string;
  memory: string;
  host: string;
  port: string;
  webuiPort: string;
  workDir: string;
  conf: string[];
  /**
   * `--properties-file`, handed to every daemon; without it each daemon reads conf/'s (or
   * $WICK_CONF_DIR's) spark-defaults.conf and wick-defaults.conf, as every Wick process does.
   */
  propertiesFile?: string;
  /** Masters to start (default 1); more than one needs `zookeeper`. */
  masters?: number;
  /** host:port of a ZooKeeper: the masters use recovery mode ZOOKEEPER with it. */
  zookeeper?: string;
}

export interface Daemon {
  name: string;
  log: string;
  child: ResultPromise;
}

export interface LocalCluster {
  /** wick://host:port, or wick://h:p1,h:p2 with several masters. */
  url: string;
  /** The leading master's web UI. */
  webUiUrl: string;
  /** Every master, in the order started. */
  masters: { url: string; webUiUrl: string }[];
  logDir: string;
  daemons: Daemon[];
  /** Resolves with the first daemon that exits. */
  firstExit: Promise<Daemon>;
  /** Stops every daemon (workers kill their executors first); idempotent. */
  stop(): Promise<void>;
}

/**
 * A master and N workers as child processes of this one, ready once every worker is registered.
 * Each daemon gets a pipe on stdin and exits when it closes, so none outlives this process even if
 * it is killed outright.
 */
export async function startLocalCluster(
  o: LocalClusterOptions,
  progress: (line: string) => void = () => {},
): Promise<LocalCluster> {
  const workDir = resolve(o.workDir);
  const logDir = join(workDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const masterCount = o.masters ?? 1;
  if (masterCount > 1 && !o.zookeeper) {
    throw new Error(
      '--masters above 1 needs --zookeeper HOST:PORT: standby masters elect their leader there',
    );
  }
  // A local cluster's runs are logged unless told otherwise: first, so that a --conf wins.
  const own = ['wick.deploy.eventLogByDefault=true', ...o.conf];
  const conf = o.zookeeper
    ? [...own, 'wick.deploy.recoveryMode=ZOOKEEPER', `wick.deploy.zookeeper.url=${o.zookeeper}`]
    : own;
  const confArgs = [
    ...conf.flatMap((c) => ['--conf', c]),
    ...(o.propertiesFile !== undefined ? ['--properties-file', o.propertiesFile] : []),
  ];
  const daemons: Daemon[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= Promise.all(daemons.map((d) => stopDaemon(d))).then(() => undefined);
    return stopping;
  };
  try {
    const masters: { url: string; webUiUrl: string }[] = [];
    for (let i = 0; i < masterCount; i++) {
      const master = spawnDaemon(masterCount > 1 ? `master-${i + 1}` : 'master', logDir, [
        'master',
        '--host',
        o.host,
        '--port',
        nthPort(o.port, i),
        '--webui-port',
        nthPort(o.webuiPort, i),
        ...confArgs,
      ]);
      daemons.push(master);
      const ready = (await readyLine(master)) as { url: string; webUiUrl: string };
      masters.push(ready);
      progress(`Master ${ready.url} is up (web UI ${ready.webUiUrl})`);
    }
    const url = `wick://${masters.map((m) => m.url.replace(/^wick:\/\//, '')).join(',')}`;
    // With standby masters, workers register with all of them; the leader is the one to watch.
    const leader =
      masterCount > 1
        ? await leaderOf(url, 60_000, clientConf(o))
        : (masters[0] as (typeof masters)[number]);
    if (masterCount > 1) progress(`Master ${leader.url} leads; the others are STANDBY`);
    progress(`Starting ${o.workers} worker(s)…`);
    for (let i = 1; i <= o.workers; i++) {
      daemons.push(
        spawnDaemon(`worker-${i}`, logDir, [
          'worker',
          url,
          '--host',
          o.host,
          '--port',
          '0',
          // Workers share the machine: each takes a free web UI port (it is in the master's state).
          '--webui-port',
          '0',
          '--cores',
          o.cores,
          '--memory',
          o.memory,
          '--work-dir',
          workDir,
          ...confArgs,
        ]),
      );
    }
    await Promise.all(daemons.slice(masterCount).map((d) => readyLine(d)));
    // local-cluster's own client of the master needs the daemons' settings too (wick.authenticate).
    await waitForWorkers(
      leader.url,
      o.workers,
      (alive) => progress(`  ${alive}/${o.workers} workers registered`),
      clientConf(o),
    );
    return {
      url,
      webUiUrl: leader.webUiUrl,
      masters,
      logDir,
      daemons,
      firstExit: Promise.race(daemons.map((d) => d.child.then(() => d))),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The i-th master's port: the given one plus i, or 0 (a free one) for all. */
function nthPort(port: string, i: number): string {
  const n = Number(port);
  return Number.isInteger(n) && n > 0 ? String(n + i) : port;
}

/**
 * The daemons' settings, for this process's own client of them (wick.authenticate, the secret's
 * file): the properties files, then the `--conf key=value` pairs, read without a second round of
 * warnings (the daemons have checked and named them already).
 */
export function clientConf(o: Pick<LocalClusterOptions, 'conf' | 'propertiesFile'>): WickConf {
  const conf = new WickConf();
  const files = o.propertiesFile !== undefined ? [o.propertiesFile] : defaultPropertiesFiles();
  for (const file of files) for (const [k, v] of readPropertiesFile(file)) conf.set(k, v);
  for (const pair of o.conf) {
    const eq = pair.indexOf('=');
    if (eq > 0) conf.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }
  return conf;
}

function spawnDaemon(name: string, logDir: string, args: string[]): Daemon {
  const log = join(logDir, `${name}.out`);
  const fd = openSync(log, 'w');
  const child = execa(
    process.execPath,
    [process.argv[1] as string, ...args, '--print-ready', '--exit-with-parent'],
    {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: fd as 3,
      buffer: false,
      reject: false,
      cleanup: false,
    },
  );
  return { name, log, child };
}

/** The JSON line a daemon prints once started; an early exit shows the end of its log. */
async function readyLine(d: Daemon): Promise<unknown> {
  const stdout = d.child.stdout;
  if (!stdout) throw new Error(`${d.name} has no stdout`);
  let buf = '';
  const line = await new Promise<string | undefined>((resolve) => {
    const onData = (chunk: Buffer) => {
      buf += chunk.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        stdout.off('data', onData);
        resolve(buf.slice(0, nl));
      }
    };
    stdout.on('data', onData);
    void d.child.then(() => resolve(undefined));
  });
  if (line === undefined) {
    const tail = readFileSync(d.log, 'utf8').trim().split('\n').slice(-8).join('\n');
    throw new Error(`${d.name} exited during start-up. The end of ${d.log}:\n${tail}`);
  }
  return JSON.parse(line);
}

async function stopDaemon(d: Daemon): Promise<void> {
  if (d.child.exitCode !== null || d.child.signalCode !== null) return;
  d.child.kill('SIGTERM');
  const timer = setTimeout(() => d.child.kill('SIGKILL'), 20_000);
  await d.child;
  clearTimeout(timer);
}
