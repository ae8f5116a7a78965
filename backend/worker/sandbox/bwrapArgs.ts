/**
 * The bubblewrap command line that confines one executor or cluster-mode driver: pure, so that
 * what a confined process sees is written in one place and tested without starting anything.
 *
 * The view, in mount order (a later mount covers an earlier one):
 * 1. the system read-only: /usr and the top-level dirs that point into it (/bin, /lib, ...), and
 *    of /etc only what programs need to run, resolve names and check certificates (ETC_VISIBLE:
 *    never shadow, gshadow, sudoers, ssh keys, nor anything a service keeps there);
 * 2. a fresh /proc of its own PID namespace, a minimal /dev, an empty /tmp and an empty $HOME of
 *    its own (tools that write caches there work; nothing of the worker's user is in it);
 * 3. Node, the Wick install and the operator's extra paths read-only;
 * 4. the worker's private places covered with an empty tmpfs wherever step 3 made them visible
 *    (the work dir, the roots of the applications' local dirs, the secret file's folder): a Wick
 *    run from a checkout keeps its work dir inside the install;
 * 5. the worker's code cache read-only at /run/wick/compile-cache (compileCacheWarmup.ts), named by
 *    WICK_COMPILE_CACHE: the empty $HOME has none, and compiling the CLI bundle afresh cost a
 *    confined executor about 90 ms of CPU (3.5× what loading it from a cache costs). Not at its
 *    path in the work dir, where it would show beside the process's own dir;
 * 6. its own dirs read-write: its directory and its application's local dirs.
 * With its own PID namespace (it sees its own processes only; when its first process ends, the
 * kernel kills the rest), no capabilities (root inside cannot unmount step 4), and
 * --die-with-parent. The network is shared: executors talk to their driver and to each other.
 */
export interface SandboxView {
  /** The top-level entries of / that lead into /usr: symlinks are copied, dirs bound. */
  readonly systemDirs: readonly { path: string; symlinkTo?: string }[];
  /**
   * Where the host's /etc/localtime links, when it links into /usr: the link is made again, not
   * the file bound. ICU names the time zone by that link; given a plain file it compared it with
   * every file in /usr/share/zoneinfo, 20 ms at each confined process's first log line.
   */
  readonly localtimeLink?: string;
  /** Trees shown read-only at the same path: Node's install, Wick's, the operator's extras. */
  readonly readOnly: readonly string[];
  /** The worker's own places, covered wherever a read-only tree shows them. */
  readonly hidden: readonly string[];
  /** Files of the worker's (a secret file named in its settings), shown empty where visible. */
  readonly hiddenFiles?: readonly string[];
  /** A home of its own (the worker's $HOME path, empty), so that $HOME points somewhere. */
  readonly home?: string;
  /**
   * The worker's V8 code cache of Wick's CLI bundle, which only the worker writes (warmed by a
   * process of its own, compileCacheWarmup.ts): shown read-only, so that no application's code
   * can put code there that another application's executor would run.
   */
  readonly compileCache?: string;
}

/** What of /etc a confined process sees: how to run programs, resolve names, trust certificates. */
export const ETC_VISIBLE = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'debian_version',
  'gai.conf',
  'group',
  'host.conf',
  'hostname',
  'hosts',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'pki',
  'protocols',
  'resolv.conf',
  'services',
  'ssl',
  'timezone',
] as const;

/** Where dist/wick.cjs looks for its code cache (backend/util/compileCache.ts). */
export const COMPILE_CACHE_ENV = 'WICK_COMPILE_CACHE';
/** Where a confined process finds the worker's code cache. */
export const SANDBOXED_COMPILE_CACHE = '/run/wick/compile-cache';

/** The top-level dirs a program may need, besides /usr. */
export const SYSTEM_TOP_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/** Whether `path` is `tree` or inside it (both absolute, normalised). */
export function isWithin(path: string, tree: string): boolean {
  if (tree === '/') return true;
  return path === tree || path.startsWith(`${tree}/`);
}

export function bwrapArgs(
  view: SandboxView,
  own: { readonly cwd: string; readonly readWrite: readonly string[] },
  argv: readonly string[],
  /** The code cache writable: for the worker's own run that fills it, never an application's. */
  options: { readonly compileCacheWritable?: boolean } = {},
): string[] {
  const a: string[] = ['--ro-bind', '/usr', '/usr'];
  for (const d of view.systemDirs) {
    if (d.symlinkTo !== undefined) a.push('--symlink', d.symlinkTo, d.path);
    else a.push('--ro-bind', d.path, d.path);
  }
  for (const e of ETC_VISIBLE) {
    if (e === 'localtime' && view.localtimeLink !== undefined)
      a.push('--symlink', view.localtimeLink, '/etc/localtime');
    else a.push('--ro-bind-try', `/etc/${e}`, `/etc/${e}`);
  }
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  const home = view.home && view.home !== '/' ? view.home : undefined;
  // A home inside a read-only tree is covered after that tree is mounted; any other comes first,
  // so that a tree inside it (Wick installed in ~/wick) shows on top of it.
  const homeInsideTree = home !== undefined && view.readOnly.some((t) => isWithin(home, t));
  if (home !== undefined && !homeInsideTree) a.push('--tmpfs', home);
  for (const t of view.readOnly) a.push('--ro-bind', t, t);
  const hidden = homeInsideTree ? [...view.hidden, home] : view.hidden;
  for (const h of hidden) {
    if (view.readOnly.some((t) => isWithin(h, t))) a.push('--tmpfs', h);
  }
  for (const f of view.hiddenFiles ?? []) {
    if (view.readOnly.some((t) => isWithin(f, t))) a.push('--ro-bind', '/dev/null', f);
  }
  if (view.compileCache !== undefined) {
    a.push(
      options.compileCacheWritable ? '--bind' : '--ro-bind-try',
      view.compileCache,
      SANDBOXED_COMPILE_CACHE,
    );
    a.push('--setenv', COMPILE_CACHE_ENV, SANDBOXED_COMPILE_CACHE);
  }
  for (const d of [own.cwd, ...own.readWrite]) a.push('--bind', d, d);
  a.push(
    '--chdir',
    own.cwd,
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--',
    ...argv,
  );
  return a;
}
