/**
 * Runs one `wick` command on each worker host, in parallel, as Spark's sbin/workers.sh does: over
 * `ssh <opts> <host> "cd $WICK_HOME; …"`, every line of its output and errors prefixed with
 * `<host>: `, and the exit status of each kept, so that a host that cannot be reached is named
 * while the others carry on. Decided otherwise than Spark:
 *
 * - `localhost` (and 127.0.0.1, ::1) runs the command here, without ssh: a one-machine cluster
 *   needs no sshd of its own. Spark ssh'es even there.
 * - ssh's options default to `-o StrictHostKeyChecking=accept-new -o BatchMode=yes
 *   -o ConnectTimeout=10` rather than Spark's `-o StrictHostKeyChecking=no`: a new host's key is
 *   learnt on first contact as with Spark, but a host whose key changed is refused (`no` would
 *   talk to it, and pipe it the cluster secret); BatchMode fails a host that wants a password at
 *   once instead of prompting from ten hosts together; ConnectTimeout bounds an unreachable one.
 *   WICK_SSH_OPTS (or SPARK_SSH_OPTS) replaces them all, split into words at blanks as
 *   workers.sh splits SPARK_SSH_OPTS (so an option's value holds no blank: `-o Opt=value`).
 * - The settings a Spark operator puts in the spark-env.sh copied to every host (the worker's
 *   cores, memory, ports, dirs; the launcher's log and pid dirs, instances, conf dir) are passed
 *   on from this machine's environment, as `env NAME=value` on the remote command. Never the
 *   secret: it goes on ssh's stdin (`wick start-worker --secret-stdin`).
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { LAUNCHER_ENV, launcherEnv } from '../../conf/launcherEnv.js';

export const DEFAULT_SSH_OPTS = [
  '-o',
  'StrictHostKeyChecking=accept-new',
  '-o',
  'BatchMode=yes',
  '-o',
  'ConnectTimeout=10',
];

const LOCAL_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '::1']);

/** Variables of this machine's environment passed on to each host's `wick` (never a secret). */
const PASSED_ON = [
  // Only when set here: it moves the default log dir to $WICK_HOME/logs (daemonFiles.ts).
  'WICK_HOME',
  'WICK_CONF_DIR',
  ...LAUNCHER_ENV.pidDir,
  ...LAUNCHER_ENV.logDir,
  ...LAUNCHER_ENV.ident,
  ...LAUNCHER_ENV.logMaxFiles,
  ...LAUNCHER_ENV.workerInstances,
  'WICK_WORKER_CORES',
  'WICK_WORKER_MEMORY',
  'WICK_WORKER_PORT',
  'WICK_WORKER_WEBUI_PORT',
  'WICK_WORKER_DIR',
  'WICK_LOCAL_DIRS',
  'SPARK_WORKER_CORES',
  'SPARK_WORKER_MEMORY',
  'SPARK_WORKER_PORT',
  'SPARK_WORKER_WEBUI_PORT',
  'SPARK_WORKER_DIR',
  'SPARK_LOCAL_DIRS',
];

const PATHS: ReadonlySet<string> = new Set([
  'WICK_HOME',
  'WICK_CONF_DIR',
  ...LAUNCHER_ENV.pidDir,
  ...LAUNCHER_ENV.logDir,
]);

export function sshOptions(env: NodeJS.ProcessEnv): string[] {
  const given = launcherEnv(env, LAUNCHER_ENV.sshOpts);
  return given ? given.value.trim().split(/\s+/) : DEFAULT_SSH_OPTS;
}

/** `text` as one word of a POSIX shell's command line. */
export function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface HostCommand {
  /** Arguments of `wick` (`start-worker --secret-stdin wick://…`). */
  args: readonly string[];
  /** Written to the command's stdin, which is then closed. */
  stdin?: string;
}

export interface OnHostsOptions {
  env: NodeJS.ProcessEnv;
  /** The Wick install, at the same path on every host (WICK_HOME, as Spark's SPARK_HOME). */
  home: string;
  /** This `wick`: [node, cli], run as it is for localhost. */
  local: readonly string[];
  /** Where the prefixed lines go. */
  out: (line: string) => void;
}

export interface HostResult {
  host: string;
  /** The exit status (ssh's 255: it could not reach the host); null when killed. */
  code: number | null;
}

export async function runOnHosts(
  hosts: readonly string[],
  command: HostCommand,
  o: OnHostsOptions,
): Promise<HostResult[]> {
  const ssh = sshOptions(o.env);
  return Promise.all(hosts.map((host) => runOnHost(host, command, o, ssh)));
}

function runOnHost(
  host: string,
  command: HostCommand,
  o: OnHostsOptions,
  ssh: readonly string[],
): Promise<HostResult> {
  const env = { ...o.env };
  delete env.WICK_AUTH_SECRET;
  const [file, args] = LOCAL_HOSTS.has(host)
    ? [o.local[0] as string, [...o.local.slice(1), ...command.args]]
    : ['ssh', [...ssh, host, remoteCommand(o, command.args)]];
  const child = spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  child.stdin.end(command.stdin ?? '');
  const prefix = (stream: NodeJS.ReadableStream) =>
    new Promise<void>((resolve) => {
      const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
      lines.on('line', (line) => o.out(`${host}: ${line}`));
      lines.on('close', resolve);
    });
  const drained = Promise.all([prefix(child.stdout), prefix(child.stderr)]);
  return new Promise((resolve) => {
    child.once('error', (err) => {
      o.out(`${host}: cannot run ${file}: ${err.message}`);
      resolve({ host, code: 127 });
    });
    child.once('close', (code) => void drained.then(() => resolve({ host, code })));
  });
}

/** The command line the host's shell runs: in the install, this machine's Node first on PATH. */
export function remoteCommand(
  o: Pick<OnHostsOptions, 'env' | 'home'>,
  args: readonly string[],
): string {
  const passed = PASSED_ON.filter((n) => o.env[n] !== undefined && o.env[n] !== '').map((n) => {
    const v = o.env[n] as string;
    // A folder named relative to here means the same folder there only when absolute.
    return `${n}=${shellWord(PATHS.has(n) ? resolve(v) : v)}`;
  });
  const nodeDir = dirname(process.execPath);
  return [
    `cd ${shellWord(o.home)} &&`,
    `exec env PATH=${shellWord(nodeDir)}:"$PATH"`,
    ...passed,
    'node',
    shellWord(join(o.home, 'bin', 'wick.js')),
    ...args.map(shellWord),
  ].join(' ');
}
