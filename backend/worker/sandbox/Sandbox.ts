import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { SandboxMode } from '../../conf/sandbox.js';
import { distFile } from '../../util/paths.js';
import { bwrapArgs, isWithin, type SandboxView, SYSTEM_TOP_DIRS } from './bwrapArgs.js';

/**
 * What a worker runs its applications' processes in: bubblewrap, or nothing. Chosen once at the
 * worker's start (chooseSandbox) and tried there with a real `node -e 0` in the same view, so that
 * a bwrap that cannot work on this machine (no user namespaces for an unprivileged user, a
 * container without CAP_SYS_ADMIN) is known before the first executor, not at it.
 */
export interface Sandbox {
  /** `argv` as it runs confined to `cwd` and `readWrite` (its own dirs). */
  wrap(
    argv: readonly string[],
    own: { cwd: string; readWrite: readonly string[] },
    options?: { compileCacheWritable?: boolean },
  ): string[];
  /** For the logs and the docs: the bwrap that runs. */
  readonly description: string;
  /** The worker's code cache, shown read-only to what runs confined (compileCacheWarmup.ts). */
  readonly compileCache?: string;
}

/** The worker's own places: what no confined process may see even where the install shows it. */
export interface WorkerPrivate {
  workDir: string;
  localDirRoots: readonly string[];
  /** Folders of secrets (the default secret file's, ~/.config/wick): hidden whole. */
  secretDirs: readonly string[];
  /** Secret files named in the worker's settings: shown empty wherever visible. */
  secretFiles: readonly string[];
  /** The operator's extra read-only paths (wick.executor.sandbox.readOnlyPaths). */
  extraReadOnly: readonly string[];
  /** A folder of the worker's for the CLI bundle's code cache, which it alone writes; none: off. */
  compileCache?: string;
}

export interface SandboxChoice {
  sandbox: Sandbox | undefined;
  /** The loud warning a worker prints at start when it runs applications open; none if confined. */
  warning?: string;
}

export const INSTALL_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora/RHEL: dnf install bubblewrap) and, as an unprivileged user, allow user namespaces (sysctl kernel.unprivileged_userns_clone=1 where the kernel has it)';

export function chooseSandbox(mode: SandboxMode, priv: WorkerPrivate): SandboxChoice {
  if (mode === 'none') {
    return {
      sandbox: undefined,
      warning:
        "wick.executor.sandbox is none: executors and cluster-mode drivers run OPEN, as this worker's user. An application's code can read every file that user can (other applications' dirs, the work dir, any secret file it can reach) and the environment of every process of that user. Run open only on a machine where every application is trusted.",
    };
  }
  const found = findBwrap();
  const problem = found ? tryBwrap(found, priv) : `bwrap was not found on PATH`;
  if (found && problem === undefined) return { sandbox: bwrapSandbox(found, priv) };
  if (mode === 'bwrap') {
    throw new Error(
      `wick.executor.sandbox is bwrap, but ${problem}: ${INSTALL_HINT}, or set wick.executor.sandbox=none to run applications open (trusted applications only)`,
    );
  }
  return {
    sandbox: undefined,
    warning: `Cannot confine applications (${problem}): executors and cluster-mode drivers run OPEN, as this worker's user, and an application's code can read what that user can (other applications' dirs, the secret file, other processes' environments). To confine them, ${INSTALL_HINT}; set wick.executor.sandbox=bwrap to refuse to start without it, or =none to silence this.`,
  };
}

export function findBwrap(pathEnv = process.env.PATH ?? ''): string | undefined {
  for (const dir of [...pathEnv.split(delimiter), '/usr/bin', '/usr/local/bin']) {
    if (!dir) continue;
    const p = join(dir, 'bwrap');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * /etc/localtime's link when it leads into /usr and stays there, which every sandbox shows as it
 * is (bwrapArgs.ts): the same link then resolves inside the sandbox as it does here.
 */
function localtimeLink(): string | undefined {
  try {
    const link = readlinkSync('/etc/localtime');
    const inUsr =
      isWithin(resolve('/etc', link), '/usr') && isWithin(realpathSync('/etc/localtime'), '/usr');
    return inUsr ? link : undefined;
  } catch {
    // Not a link, or none: bound as it is, if there.
    return undefined;
  }
}

/** The view of this machine: which top-level dirs exist and how, where Node and Wick are. */
export function sandboxView(priv: WorkerPrivate): SandboxView {
  const systemDirs: { path: string; symlinkTo?: string }[] = [];
  for (const path of SYSTEM_TOP_DIRS) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) systemDirs.push({ path, symlinkTo: readlinkSync(path) });
      else if (st.isDirectory()) systemDirs.push({ path });
    } catch {
      // Not on this system.
    }
  }
  const readOnly: string[] = [];
  const add = (p: string) => {
    let real: string;
    try {
      real = realpathSync(p);
    } catch {
      return;
    }
    if (real === '/' || readOnly.some((t) => isWithin(real, t)) || isWithin(real, '/usr')) return;
    readOnly.push(real);
  };
  // Node: /usr/bin/node is already there; a Node of its own (/opt/node, ~/.nvm/...) is its prefix.
  add(dirname(dirname(realpathSync(process.execPath))));
  const install = resolve(dirname(distFile('wick.cjs')), '..');
  add(install);
  // A checkout whose node_modules is a link elsewhere (a git worktree sharing one).
  if (existsSync(join(install, 'node_modules'))) add(join(install, 'node_modules'));
  if (process.env.WICK_DIST) add(process.env.WICK_DIST);
  for (const p of priv.extraReadOnly) add(p);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return {
    systemDirs,
    localtimeLink: localtimeLink(),
    readOnly,
    hidden: [priv.workDir, ...priv.localDirRoots, ...priv.secretDirs]
      .map(real)
      // Never cover what must show (a work dir that holds the install, as odd as that is).
      .filter((h) => !readOnly.some((t) => isWithin(t, h))),
    hiddenFiles: priv.secretFiles.filter((f) => existsSync(f)).map(real),
    home: os.homedir(),
    ...(priv.compileCache === undefined ? {} : { compileCache: resolve(priv.compileCache) }),
  };
}

function bwrapSandbox(bwrap: string, priv: WorkerPrivate): Sandbox {
  const view = sandboxView(priv);
  return {
    description: `${bwrap} (read-only: /usr, system dirs, ${view.readOnly.join(', ')})`,
    ...(view.compileCache === undefined ? {} : { compileCache: view.compileCache }),
    wrap: (argv, own, options) => [bwrap, ...bwrapArgs(view, own, argv, options)],
  };
}

/** Runs `node -e 0` confined as a launch would be; the reason it failed, or undefined. */
function tryBwrap(bwrap: string, priv: WorkerPrivate): string | undefined {
  const dir = mkdtempSync(join(os.tmpdir(), 'wick-sandbox-probe-'));
  try {
    const argv = bwrapSandbox(bwrap, priv).wrap([process.execPath, '-e', '0'], {
      cwd: dir,
      readWrite: [],
    });
    const r = spawnSync(argv[0] as string, argv.slice(1), {
      encoding: 'utf8',
      timeout: 20_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.error) return `${bwrap} could not run: ${r.error.message}`;
    if (r.status !== 0) {
      const why = (r.stderr ?? '').trim().split('\n')[0] || `exit ${r.status ?? r.signal}`;
      return `${bwrap} failed here: ${why.slice(0, 300)}`;
    }
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Validates wick.executor.sandbox.readOnlyPaths: absolute paths, comma-separated. */
export function parseReadOnlyPaths(raw: string): string[] {
  const paths = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const p of paths) {
    if (!isAbsolute(p)) {
      throw new Error(
        `wick.executor.sandbox.readOnlyPaths: "${p}" is not an absolute path; expected comma-separated absolute paths such as /opt/myapp`,
      );
    }
  }
  return paths;
}
