import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { execa, type ResultPromise } from 'execa';
import { waitForWorkers } from '../masterClient.js';
import { collect } from '../options.js';

interface Flags {
  workers: string;
  cores: string;
  memory: string;
  host: string;
  port: string;
  webuiPort: string;
  workDir: string;
  conf: string[];
}

type Daemon = { name: string; log: string; child: ResultPromise };

/**
 * `wick local-cluster`: a master and N workers as child processes of this one, ready when every
 * worker is registered. Ctrl+C or SIGTERM stops them all (workers kill their executors first);
 * should this process die without cleaning up, each daemon sees its stdin close and stops itself.
 */
export function registerLocalCluster(program: Command): void {
  program
    .command('local-cluster')
    .description('Start a master and N workers on this machine, and stop them all on Ctrl+C')
    .option('-w, --workers <n>', 'number of workers', '2')
    .option('-c, --cores <n>', 'cores per worker', '1')
    .option('-m, --memory <size>', 'memory per worker', '1g')
    .option('--host <host>', 'address for every daemon', '127.0.0.1')
    .option('--port <port>', 'master RPC port (0 picks a free one)', '7077')
    .option('--webui-port <port>', 'master web UI port (0 picks a free one)', '8080')
    .option(
      '-d, --work-dir <dir>',
      'where workers run executors and daemons write their logs',
      'work',
    )
    .option('--conf <key=value>', 'configuration for every daemon (repeatable)', collect, [])
    .action(async (flags: Flags) => {
      const workers = Number(flags.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
        throw new Error(`--workers must be a whole number from 1 to 64, got "${flags.workers}"`);
      }
      await runLocalCluster(flags, workers);
    });
}

async function runLocalCluster(flags: Flags, count: number): Promise<void> {
  const workDir = resolve(flags.workDir);
  const logDir = join(workDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const confArgs = flags.conf.flatMap((c) => ['--conf', c]);
  const daemons: Daemon[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () => {
    stopping ??= Promise.all(daemons.map((d) => stopDaemon(d))).then(() => undefined);
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nReceived ${signal}: stopping the local cluster…\n`);
    void stopAll().then(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const master = spawnDaemon('master', logDir, [
      'master',
      '--host',
      flags.host,
      '--port',
      flags.port,
      '--webui-port',
      flags.webuiPort,
      ...confArgs,
    ]);
    daemons.push(master);
    const ready = (await readyLine(master)) as { url: string; webUiUrl: string };
    process.stderr.write(
      `Master ${ready.url} is up (web UI ${ready.webUiUrl}); starting ${count} worker(s)…\n`,
    );
    for (let i = 1; i <= count; i++) {
      const w = spawnDaemon(`worker-${i}`, logDir, [
        'worker',
        ready.url,
        '--host',
        flags.host,
        '--port',
        '0',
        '--cores',
        flags.cores,
        '--memory',
        flags.memory,
        '--work-dir',
        workDir,
        ...confArgs,
      ]);
      daemons.push(w);
    }
    await Promise.all(daemons.slice(1).map((d) => readyLine(d)));
    await waitForWorkers(ready.url, count, (alive) =>
      process.stderr.write(`  ${alive}/${count} workers registered\n`),
    );
    process.stdout.write(`${ready.url}\n`);
    process.stderr.write(
      `Local cluster ready: master ${ready.url}, web UI ${ready.webUiUrl}, ${count} worker(s) × ${flags.cores} core(s), ${flags.memory}.\nDaemon logs in ${logDir}. Press Ctrl+C to stop.\n`,
    );
    const firstExit = await Promise.race(daemons.map((d) => d.child.then(() => d)));
    if (!stopping) {
      process.stderr.write(
        `${firstExit.name} exited unexpectedly; see ${firstExit.log}. Stopping the rest.\n`,
      );
      await stopAll();
      process.exit(1);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
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
