import { readdir, readFile } from 'node:fs/promises';
import treeKill from 'tree-kill';
import { type Clock, systemClock } from '../../util/clock.js';
import { getLogger } from '../../util/log.js';
import { MARKER_VAR } from './launch.js';

const log = getLogger('ProcessKiller');

/** How often a kill looks whether the tree has ended. */
const POLL_MS = 20;

/**
 * Kills everything a launched child started, whatever it did to get away:
 * - its process group (the child leads one): catches descendants orphaned when their parent died;
 * - its process tree (tree-kill walks `ps`): catches descendants that called setsid;
 * - every process whose environment carries the child's marker (Linux /proc): catches descendants
 *   that did both, i.e. daemonised.
 * SIGTERM first; whatever is left after the grace period gets SIGKILL. Zombies count as gone.
 *
 * Reading every process's /proc entry is what costs (one open per process on the machine), so it
 * is done once per signal round, to learn the tree's members; the wait then looks only at those
 * pids. Once they have all gone, one more scan confirms that none was started meanwhile (a
 * SIGTERM handler may fork); only a scan that finds nobody ends the wait.
 */
export async function killProcessTree(
  pid: number,
  marker: string,
  graceMs: number,
  rootExited = false,
  clock: Clock = systemClock,
  options: { sandboxed?: boolean } = {},
): Promise<void> {
  if (pid <= 0) return;
  // The system clock's timers are unref'd: without this a process with nothing else to do (a
  // daemon shutting down) would exit between two polls, leaving the tree half killed.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const tree = new TreeMembers(pid, marker, rootExited);
    // A sandbox's root is bwrap, which SIGTERM ends at once, and with it (--die-with-parent, the
    // PID namespace) everything inside by SIGKILL: the processes inside get the SIGTERM alone,
    // and their grace period; bwrap passes on their exit. Its PID namespace's init (bwrap's own)
    // ignores a SIGTERM from outside, as the kernel does for any namespace's init.
    if (options.sandboxed) await signalInside(tree, 'SIGTERM');
    else await signalEverything(tree, 'SIGTERM');
    if (await allGone(tree, graceMs, clock)) return;
    log.info(`Process tree of ${pid} still running ${graceMs} ms after SIGTERM; sending SIGKILL`);
    await signalEverything(tree, 'SIGKILL');
    if (!(await allGone(tree, 5000, clock))) {
      log.warn(`Some processes of ${pid}'s tree survived SIGKILL: ${tree.pids().join(', ')}`);
    }
  } finally {
    clearInterval(keepAlive);
  }
}

/**
 * After a launched child exited by itself: kills whatever it left running (its group, its marked
 * descendants). Never throws; a failure is logged.
 */
export async function sweep(
  launched: { pid: number; marker: string },
  graceMs: number,
  clock: Clock = systemClock,
): Promise<void> {
  try {
    // The root has exited and been reaped, so its pid may already belong to someone else: only
    // its group and the marked processes are ours to signal.
    await killProcessTree(launched.pid, launched.marker, graceMs, true, clock);
  } catch (err) {
    log.warn(`Could not clean up after process ${launched.pid}`, err);
  }
}

async function signalEverything(tree: TreeMembers, signal: NodeJS.Signals): Promise<void> {
  const marked = await tree.scan();
  if (!tree.rootExited) {
    await new Promise<void>((resolve) => {
      // tree-kill reports ESRCH-like failures through the callback; they only mean "already gone".
      treeKill(tree.root, signal, () => resolve());
    });
  }
  signal1(-tree.root, signal);
  for (const p of marked) signal1(p, signal);
}

/** The marked processes of a sandbox but its root (sandbox/: the root is bwrap). */
async function signalInside(tree: TreeMembers, signal: NodeJS.Signals): Promise<void> {
  const marked = await tree.scan();
  for (const p of marked) if (p !== tree.root) signal1(p, signal);
}

function signal1(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') log.warn(`kill(${pid}, ${signal}) failed`, err);
  }
}

async function allGone(tree: TreeMembers, waitMs: number, clock: Clock): Promise<boolean> {
  const deadline = clock.now() + waitMs;
  for (;;) {
    if (!(await tree.anyAlive())) return true;
    if (clock.now() >= deadline) return false;
    await new Promise<void>((r) => clock.setTimeout(r, POLL_MS));
  }
}

/**
 * The live members of one launched child's tree that a kill waits for: the root (unless it has
 * exited), its group and the processes carrying its marker. Each is known by pid and start time,
 * so that a pid reused by an unrelated process after a member ended does not count.
 */
class TreeMembers {
  /** pid → start time (field 22 of /proc/<pid>/stat; '' where there is no /proc). */
  private members = new Map<number, string>();
  private readonly linux = process.platform === 'linux';

  constructor(
    readonly root: number,
    private readonly marker: string,
    readonly rootExited: boolean,
  ) {}

  /**
   * Reads every process's /proc entry once: the members found replace those known. Returns the
   * marked ones, which are signalled one by one (the group is signalled as a whole).
   */
  async scan(): Promise<number[]> {
    this.members.clear();
    if (!this.rootExited) {
      const st = await stat(this.root);
      if (st ? st.state !== 'Z' : !this.linux && exists(this.root))
        this.members.set(this.root, st?.start ?? '');
    }
    if (!this.linux) {
      // No /proc: the group is known only as a whole, and counts while kill(-pgid, 0) succeeds.
      if (exists(-this.root)) this.members.set(-this.root, '');
      return [];
    }
    const marked: number[] = [];
    const needle = `${MARKER_VAR}=${this.marker}\0`;
    await Promise.all(
      (await procPids()).map(async (p) => {
        const st = await stat(p);
        if (!st || st.state === 'Z') return;
        let isMarked = false;
        try {
          isMarked = (await readFile(`/proc/${p}/environ`, 'latin1')).includes(needle);
        } catch {
          // Gone already, or not ours to read.
        }
        if (isMarked) marked.push(p);
        if (isMarked || st.pgid === this.root) this.members.set(p, st.start);
      }),
    );
    log.debug(`Process tree of ${this.root}: ${this.members.size} live members`);
    return marked;
  }

  /** Whether a member still runs: the known ones by pid, then, once none does, a fresh scan. */
  async anyAlive(): Promise<boolean> {
    for (const [p, start] of this.members)
      if (!(await this.stillRunning(p, start))) this.members.delete(p);
    if (this.members.size > 0) return true;
    await this.scan();
    return this.members.size > 0;
  }

  pids(): number[] {
    return [...this.members.keys()];
  }

  private async stillRunning(p: number, start: string): Promise<boolean> {
    if (!exists(p)) return false;
    if (!this.linux) return true;
    const st = await stat(p);
    return st !== undefined && st.state !== 'Z' && st.start === start;
  }
}

/**
 * kill(pid, 0): there is such a process (or group) of ours, perhaps a zombie. EPERM means the pid
 * now belongs to another user, so not to the tree.
 */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The fields of /proc/<pid>/stat a kill needs; undefined once gone (or where there is no /proc). */
async function stat(
  pid: number,
): Promise<{ state: string; pgid: number; start: string } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: f[0] as string, pgid: Number(f[2]), start: f[19] as string };
  } catch {
    return undefined;
  }
}

/** Every pid in /proc but this process's own. */
async function procPids(): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  return entries.filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid).map(Number);
}

/** Pids whose environment carries WICK_PROCESS_MARKER=marker (Linux only; empty elsewhere). */
export async function markedPids(marker: string): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  const needle = `${MARKER_VAR}=${marker}\0`;
  const found: number[] = [];
  await Promise.all(
    (await procPids()).map(async (p) => {
      try {
        const env = await readFile(`/proc/${p}/environ`, 'latin1');
        if (env.includes(needle)) found.push(p);
      } catch {
        // Gone already, or not ours to read.
      }
    }),
  );
  return found;
}
