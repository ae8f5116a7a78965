/**
 * A real ZooKeeper server for tests and benchmarks: Debian's `zookeeper` package (.ci/run installs
 * it), run as a child process on loopback on a free port with a temporary data directory, as
 * TOOLCHAIN.md describes. Ready when the `srvr` four-letter command answers with `Mode:`. A test
 * that needs it skips, saying why, only outside CI when the package is missing; in CI it fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { unusedPort } from './net.js';

const JARS = ['/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-simple.jar'];
const CLASSPATH = ['/etc/zookeeper/conf', ...JARS].join(':');
const MAIN = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';

/** Why ZooKeeper cannot run here, or undefined if it can. */
export function zooKeeperMissing(): string | undefined {
  const missing = JARS.filter((j) => !existsSync(j));
  if (missing.length > 0) {
    return `ZooKeeper is not installed (${missing.join(', ')} missing): apt-get install -y zookeeper`;
  }
  return undefined;
}

/** Skips the test (outside CI) when ZooKeeper is missing; true if it did. In CI, throws instead. */
export function skipWithoutZooKeeper(t: TestContext): boolean {
  const why = zooKeeperMissing();
  if (!why) return false;
  if (process.env.CI) throw new Error(`${why} (CI must install it: see .ci/run)`);
  t.skip(why);
  return true;
}

export interface ZooKeeperServer {
  port: number;
  /** host:port, for wick.deploy.zookeeper.url. */
  url: string;
  dataDir: string;
  tickTimeMs: number;
  readonly isRunning: boolean;
  output(): string;
  /** SIGKILLs the server and waits until it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory, and waits until it is ready. */
  restart(): Promise<void>;
  /** Kills it and removes its data directory. */
  stop(): Promise<void>;
}

export interface ZooKeeperOptions {
  /** ZooKeeper's tick; sessions may last 2 to 20 ticks (default 500 ms: 1 s to 10 s). */
  tickTimeMs?: number;
}

/** Starts ZooKeeper on 127.0.0.1; with `t`, it is stopped when the test ends. */
export async function startZooKeeper(
  t: TestContext | undefined,
  opts: ZooKeeperOptions = {},
): Promise<ZooKeeperServer> {
  const why = zooKeeperMissing();
  if (why) throw new Error(why);
  const tickTimeMs = opts.tickTimeMs ?? 500;
  const dataDir = mkdtempSync(join(tmpdir(), 'wick-test-zk-'));
  const port = await unusedPort();
  const cfg = join(dataDir, 'zoo.cfg');
  writeFileSync(
    cfg,
    [
      `tickTime=${tickTimeMs}`,
      `dataDir=${join(dataDir, 'data')}`,
      `clientPort=${port}`,
      'clientPortAddress=127.0.0.1',
      'admin.enableServer=false',
      '4lw.commands.whitelist=srvr',
      'maxClientCnxns=0',
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  let out = '';
  let exited: Promise<void> = Promise.resolve();

  const launch = async () => {
    out = '';
    // Java under a shell that SIGKILLs it when its stdin (a pipe from this process) closes: when
    // kill() closes it, or when this process dies however it dies, ZooKeeper goes too.
    const c = spawn(
      'sh',
      [
        '-c',
        'exec 3<&0; java -Xmx256m -cp "$1" "$2" "$3" </dev/null & z=$!; (cat <&3 >/dev/null; kill -9 $z) & wait $z',
        'zookeeper',
        CLASSPATH,
        MAIN,
        cfg,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ZOO_LOG_DIR: dataDir } },
    );
    child = c;
    c.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    c.stderr?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    for (;;) {
      if (gone) throw new Error(`ZooKeeper exited before it was ready:\n${out.slice(-4000)}`);
      if ((await fourLetter(port, 'srvr').catch(() => '')).includes('Mode:')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** SIGKILLs ZooKeeper (by closing its shell's stdin) and waits until it has exited. */
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.stdin?.end();
    await exited;
  };

  await launch();
  const server: ZooKeeperServer = {
    port,
    url: `127.0.0.1:${port}`,
    dataDir,
    tickTimeMs,
    get isRunning() {
      return !!child && child.exitCode === null && child.signalCode === null;
    },
    output: () => out,
    kill,
    restart: launch,
    async stop() {
      await kill();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  t?.after(() => server.stop());
  return server;
}

/** Sends a four-letter command and returns the whole answer. */
export function fourLetter(port: number, cmd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(2000, () => socket.destroy(new Error('timeout')));
    socket.on('connect', () => socket.write(cmd));
    socket.on('data', (d: string) => {
      answer += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}
