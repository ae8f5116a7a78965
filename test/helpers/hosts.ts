/**
 * Simulated hosts for multi-host tests (the recipe of TOOLCHAIN.md, "Several hosts on one
 * machine"): each host is a network namespace with one veth on a bridge that lives in a namespace
 * of its own, and every process started on it also gets a private mount namespace with its own
 * tmpfs /tmp and ~/.cache. So nothing passes between hosts but the network; the Wick install (this
 * repository, bound back in where a host's own /tmp would hide it) is the one thing they share, as
 * if installed on each.
 *
 * Each harness claims a free id, which names its namespaces (`wick<id>-…`) and its /24, so test
 * files may run at the same time. Cleanup, when the test ends however it ends: SIGTERM to every
 * process group it started, then SIGKILL to every process left in its namespaces (which also
 * catches a grandchild that called setsid: a namespace knows its processes), then the namespaces
 * are deleted (a process left in a deleted namespace would live on, unreachable). A watchdog does
 * the same if the test process itself is killed before its `after` hooks run.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot, wickBin } from './cli.js';
import {
  Daemon,
  type Launch,
  type MasterOptions,
  type MasterProcess,
  startMaster,
  startWorker,
  type WorkerOptions,
  type WorkerProcess,
} from './cluster.js';
import { waitFor } from './processes.js';

const run = promisify(execFile);

/**
 * Runs on the host, in its fresh mount namespace, before the command replaces it: its own /tmp and
 * ~/.cache, and the Wick install ($1, this repository) where it was. A clone under /tmp (or
 * ~/.cache) would be hidden by the host's fresh /tmp: the shell holds the install's folder open
 * (fd 9) before mounting, and binds it back at its path from that descriptor (`mount -c`: the
 * magic link names the hidden folder itself, not its path, which now names an empty one).
 */
const HOST_SHELL = `install=$1; shift
exec 9<"$install" || exit 97
mkdir -p "$HOME/.cache" && mount -t tmpfs none /tmp && mount -t tmpfs none "$HOME/.cache" || exit 97
if [ ! -e "$install/package.json" ]; then
  mkdir -p "$install" && mount -c --bind /proc/self/fd/9 "$install" || exit 97
fi
exec 9<&-
exec "$@"`;

/** How long cleanup lets SIGTERMed processes exit by themselves before SIGKILLing the rest. */
const TERM_GRACE_MS = 3_000;

let unavailable: string | undefined | null = null;

/**
 * Why namespaces cannot be made here (for `test(…, { skip: hostsUnavailable() })`), or undefined
 * when they can. Tried once per process, with a namespace made and deleted.
 */
export function hostsUnavailable(): string | undefined {
  if (unavailable !== null) return unavailable;
  unavailable = probe();
  return unavailable;
}

function probe(): string | undefined {
  if (process.platform !== 'linux') return `multi-host tests need Linux, not ${process.platform}`;
  if (process.getuid?.() !== 0)
    return 'multi-host tests need root to make network namespaces (CI runs as root)';
  for (const tool of ['ip', 'unshare', 'tail']) {
    const r = spawnSync('sh', ['-c', `command -v ${tool}`]);
    if (r.status !== 0)
      return `multi-host tests need \`${tool}\` (apt-get install iproute2 util-linux coreutils)`;
  }
  const name = `wickprobe${process.pid}`;
  const add = spawnSync('ip', ['netns', 'add', name], { encoding: 'utf8' });
  if (add.status !== 0)
    return `multi-host tests cannot make a network namespace here: ${add.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', name]);
  return undefined;
}

export interface HostSpawnOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A process on a simulated host: a Daemon (stderr, waitForStderr, stop) that also keeps stdout. */
export interface HostProcess extends Daemon {
  /** Resolves once the process has exited and its pipes are drained. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Host {
  readonly name: string;
  /** Its one IPv4 address on the bridge. */
  readonly address: string;
  readonly netns: string;
  /** Starts `file args` on this host (own process group), stopped at cleanup if still running. */
  spawn(file: string, args: readonly string[], options?: HostSpawnOptions): HostProcess;
  /** For cluster.ts: starts processes on this host. */
  readonly launch: Launch;
  /** `wick master` on this host's address, port 7077 unless told. */
  startMaster(options?: MasterOptions): Promise<MasterProcess>;
  /** `wick worker` on this host's address, with its work dir in the host's own /tmp. */
  startWorker(masterUrl: string, options?: WorkerOptions): Promise<WorkerProcess>;
  /** `wick <args>` on this host, left running (a submit, say). */
  startWick(args: readonly string[], options?: HostSpawnOptions): HostProcess;
  /** `wick <args>` on this host, run to completion (SIGKILLed after `timeoutMs`, 60 s). */
  wick(
    args: readonly string[],
    options?: HostSpawnOptions & { timeoutMs?: number },
  ): Promise<RunResult>;
  /** Takes the host's link to the bridge down: its packets go nowhere (no reset, no error). */
  cut(): Promise<void>;
  /** Brings the link back up. */
  restore(): Promise<void>;
}

export interface Hosts {
  /** The hosts by name. */
  readonly hosts: Record<string, Host>;
  host(name: string): Host;
  /** e.g. 10.131.7 (the hosts are .10, .11, …). */
  readonly subnet: string;
  /** Every namespace of this harness, for a test that checks they are gone. */
  readonly namespaces: readonly string[];
  /**
   * The cluster secret every Wick process on these hosts is started with (WICK_AUTH_SECRET), as an
   * operator hands the master's join line to each machine: no host shares another's files. A
   * process given `WICK_AUTH_SECRET: ''` has none (a master then makes its own).
   */
  readonly secret: string;
  /** Removes everything now (also done when the test ends); idempotent. */
  cleanup(): Promise<void>;
}

/**
 * Makes one simulated host per name on a fresh bridge; all of it is removed when `t` ends.
 * Names are short lowercase words ('master', 'w1', 'user'). `install` is the folder every host
 * shares (this repository unless told; the harness's own test gives another, under /tmp).
 */
export async function startHosts(
  t: TestContext,
  names: readonly string[],
  options: { install?: string } = {},
): Promise<Hosts> {
  const install = options.install ?? repoRoot;
  const secret = randomBytes(24).toString('base64url');
  const why = hostsUnavailable();
  if (why) throw new Error(why);
  for (const n of names) {
    if (!/^[a-z][a-z0-9]{0,9}$/.test(n))
      throw new Error(`host name "${n}" must be 1–10 lowercase letters and digits`);
  }
  if (new Set(names).size !== names.length)
    throw new Error(`host names must differ, got ${names.join(', ')}`);
  if (names.length > 200) throw new Error(`at most 200 hosts, got ${names.length}`);

  const namespaces = new Namespaces();
  const children = new Set<ChildProcess>();
  let cleaned: Promise<void> | undefined;
  const cleanup = () => {
    cleaned ??= removeAll(namespaces, children);
    return cleaned;
  };
  // Registered first: it runs even when the setup below fails halfway.
  t.after(cleanup);
  const id = await claimId();
  const prefix = `wick${id}`;
  const hub = `${prefix}-hub`;
  namespaces.add(hub);
  const subnet = `10.${128 + (id >> 8)}.${id & 255}`;

  const ip = (...args: string[]) => run('ip', args);
  await ip('-n', hub, 'link', 'add', 'br0', 'type', 'bridge');
  await ip('-n', hub, 'link', 'set', 'br0', 'up');

  const hosts: Record<string, Host> = {};
  for (const [i, name] of names.entries()) {
    const ns = `${prefix}-${name}`;
    const veth = `v${i}`;
    const address = `${subnet}.${10 + i}`;
    await ip('netns', 'add', ns);
    namespaces.add(ns);
    // Made inside the hub namespace, so that no interface of the test ever exists outside it.
    await ip('-n', hub, 'link', 'add', veth, 'type', 'veth', 'peer', 'name', 'e0', 'netns', ns);
    await ip('-n', hub, 'link', 'set', veth, 'master', 'br0', 'up');
    await ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'e0');
    await ip('-n', ns, 'link', 'set', 'e0', 'up');
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    hosts[name] = makeHost(t, name, ns, address, children, secret, install, (state) =>
      ip('-n', hub, 'link', 'set', veth, state),
    );
  }
  return {
    hosts,
    secret,
    host(name) {
      const h = hosts[name];
      if (!h) throw new Error(`no host "${name}"; hosts: ${Object.keys(hosts).join(', ')}`);
      return h;
    },
    subnet,
    namespaces: namespaces.names,
    cleanup,
  };
}

function makeHost(
  t: TestContext,
  name: string,
  netns: string,
  address: string,
  children: Set<ChildProcess>,
  secret: string,
  install: string,
  link: (state: 'up' | 'down') => Promise<unknown>,
): Host {
  const launch: Launch = (file, args, options) => {
    const env: NodeJS.ProcessEnv = { WICK_AUTH_SECRET: secret, ...options.env };
    // A folder of the test runner's /tmp, which does not exist on a host (its /tmp is its own).
    delete env.WICK_SUBMITTED_DIR;
    const child = spawn(
      'ip',
      ['netns', 'exec', netns, 'unshare', '-m', '--propagation', 'private'].concat(
        ['bash', '-c', HOST_SHELL, '_', install, file],
        args,
      ),
      // detached: a process group of its own (setsid), killed as one at cleanup.
      { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true },
    );
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };
  const spawnOn = (file: string, args: readonly string[], options: HostSpawnOptions = {}) => {
    const child = launch(file, [...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...withoutWickSettings(), ...options.env },
    });
    const daemon = new Daemon(child, `${name}: ${args[1] ?? file}`);
    child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      daemon.stdout += s;
    });
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.once('close', (code, signal) => r({ code, signal })),
    );
    return Object.assign(daemon, { closed });
  };
  return {
    name,
    address,
    netns,
    launch,
    spawn: spawnOn,
    startMaster: (options = {}) =>
      startMaster(t, { port: 7077, label: `master on ${name}`, ...options, host: address, launch }),
    startWorker: (masterUrl, options = {}) =>
      startWorker(t, masterUrl, {
        workDir: '/tmp/wick-work',
        label: `worker on ${name}`,
        ...options,
        host: address,
        launch,
      }),
    startWick: (args, options) => spawnOn(process.execPath, [wickBin, ...args], options),
    async wick(args, options = {}) {
      const p = spawnOn(process.execPath, [wickBin, ...args], options);
      p.child.stdin?.end();
      const guard = setTimeout(() => p.kill('SIGKILL'), options.timeoutMs ?? 60_000);
      const { code, signal } = await p.closed;
      clearTimeout(guard);
      return { code, signal, stdout: p.stdout, stderr: p.stderr };
    },
    cut: async () => void (await link('down')),
    restore: async () => void (await link('up')),
  };
}

/**
 * `wick <args>` on `host`, in a shell that first writes `files` (path → text, relative) into
 * /tmp/app and works there: the host's own /tmp, which no other host sees, as a user's machine
 * holds the app they submit.
 */
export function wickInOwnTmp(
  host: Host,
  files: Record<string, string>,
  args: readonly string[],
): HostProcess {
  const env: NodeJS.ProcessEnv = {};
  const lines = ['set -e', 'mkdir -p /tmp/app && cd /tmp/app'];
  Object.keys(files).forEach((path, i) => {
    env[`APP_FILE_${i}`] = files[path];
    lines.push(`mkdir -p "$(dirname '${path}')"`, `printf '%s' "$APP_FILE_${i}" > '${path}'`);
  });
  lines.push('exec "$@"');
  return host.spawn('sh', ['-c', lines.join('\n'), 'sh', process.execPath, wickBin, ...args], {
    env,
  });
}

/** The test's environment without WICK_* settings (a master, a log level) that would change runs. */
function withoutWickSettings(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WICK_')));
}

/** A free id, claimed by making its hub namespace (which fails if another harness has it). */
async function claimId(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const id = Math.floor(Math.random() * 64 * 256);
    try {
      await run('ip', ['netns', 'add', `wick${id}-hub`]);
      return id;
    } catch (err) {
      if (!/exists/i.test(String((err as { stderr?: string }).stderr))) throw err;
    }
  }
  throw new Error('no free namespace id after 50 tries: are old wick<id>-* namespaces left?');
}

/** Pids of every process in a namespace (none once it is gone). */
async function pidsIn(ns: string): Promise<number[]> {
  try {
    const { stdout } = await run('ip', ['netns', 'pids', ns]);
    return stdout.split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

async function removeAll(namespaces: Namespaces, children: Set<ChildProcess>): Promise<void> {
  for (const c of children) signalGroup(c.pid, 'SIGTERM');
  await waitFor('processes on the hosts to stop', () => children.size === 0, TERM_GRACE_MS).catch(
    () => {},
  );
  for (const c of children) signalGroup(c.pid, 'SIGKILL');
  await waitFor(
    'every process in the namespaces to be gone',
    async () => {
      let left = 0;
      for (const ns of namespaces.names) {
        for (const pid of await pidsIn(ns)) {
          left++;
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Gone meanwhile.
          }
        }
      }
      return left === 0;
    },
    10_000,
  );
  for (const ns of namespaces.names) {
    await run('ip', ['netns', 'del', ns]).catch(() => {});
  }
  namespaces.dismissWatchdog();
}

/** Namespaces to remove, also told to a watchdog that removes them if this process is killed. */
class Namespaces {
  readonly names: string[] = [];
  private readonly dog: ChildProcess;

  constructor() {
    // It reads the names when it fires, from its stdin, which ends when this process does.
    const script = `tail --pid=${process.pid} -f /dev/null
for ns in $(cat); do ip netns pids "$ns" | xargs -r kill -9; ip netns del "$ns"; done`;
    this.dog = spawn('sh', ['-c', script], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    this.dog.unref();
    (this.dog.stdin as unknown as { unref(): void }).unref();
  }

  add(ns: string): void {
    this.names.push(ns);
    this.dog.stdin?.write(`${ns}\n`);
  }

  /** Called once they are all deleted. */
  dismissWatchdog(): void {
    signalGroup(this.dog.pid, 'SIGKILL');
  }
}
