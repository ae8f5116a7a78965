/**
 * The local cluster's runs, kept across windows: a reload or a restart of VS Code starts a new
 * agent and a new local cluster, and the Applications view would forget every run. The agent
 * records each application its local cluster ran (runs.json in the folder the extension gives,
 * its storage), keeps the cluster's work dir there instead of in a temporary folder (the
 * executors' logs outlive the cluster), and tees each submit's driver output into a file.
 *
 * A run still WAITING or RUNNING when its cluster ends (the window reloads or closes: the local
 * cluster ends with the agent, see the extension's README) is marked KILLED with a message that
 * says so, by the agent as it exits, or by the next agent when that one died without a word (its
 * pid is gone). Writes are small and synchronous (an exit handler cannot wait), re-read and
 * merged by application first (two windows without a folder share the global storage), and
 * atomic (a temporary file renamed).
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AppFailure } from '../protocol/common.js';
import type { AppSummary } from '../protocol/state.js';
import { alive } from '../util/deadOwnerDirs.js';

/** The runs kept; the oldest go (with their driver output) past this. */
export const MAX_RUNS = 100;
/** The work dirs of earlier local clusters kept (their executors' logs); older ones go. */
export const MAX_CLUSTER_DIRS = 5;
/** The most driver output kept per run, as the editor keeps (its start is what goes). */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

const ENDED = new Set(['FINISHED', 'FAILED', 'KILLED']);

export interface RunRecord {
  appId: string;
  name: string;
  /** The state last seen (the master's), or KILLED when the cluster ended under it. */
  state: string;
  startTime: number;
  endTime?: number;
  message?: string;
  failure?: AppFailure;
  /** The file submitted from the editor, and its driver output's id. */
  file?: string;
  outputId?: string;
  /** The work dir of the cluster that ran it (its executors' logs are under it). */
  clusterDir: string;
  /** The agent whose cluster ran it: a run of a live agent is that agent's to end. */
  agentPid: number;
}

export const RELOAD_MESSAGE =
  "the window reloaded or closed while it ran: the extension's local cluster ends with its window, and this run with it";
export const LOST_MESSAGE =
  'its local cluster ended while it ran (the window reloaded or closed, or the Wick agent stopped)';
export const STOPPED_MESSAGE = 'the local cluster was stopped while it ran';

export class RunStore {
  private readonly file: string;
  readonly outputsDir: string;
  readonly clustersDir: string;
  private records: RunRecord[];
  private readonly outputBytes = new Map<string, number>();

  constructor(
    readonly dir: string,
    private readonly pid = process.pid,
    private readonly warn: (m: string) => void = () => {},
  ) {
    this.file = join(dir, 'runs.json');
    this.outputsDir = join(dir, 'outputs');
    this.clustersDir = join(dir, 'clusters');
    mkdirSync(this.outputsDir, { recursive: true });
    mkdirSync(this.clustersDir, { recursive: true });
    this.records = this.read();
    // Runs of agents that died without ending them (SIGKILL, a crash).
    this.update((r) =>
      !ENDED.has(r.state) && r.agentPid !== this.pid && !alive(r.agentPid)
        ? { ...r, state: 'KILLED', message: LOST_MESSAGE }
        : r,
    );
  }

  /**
   * A new work dir for this agent's local cluster (named so that they sort by age), after removing
   * the oldest beyond MAX_CLUSTER_DIRS: their runs then show "logs removed".
   */
  newClusterDir(now = Date.now()): string {
    const names = readdirSync(this.clustersDir).sort();
    for (const old of names.slice(0, Math.max(0, names.length - (MAX_CLUSTER_DIRS - 1))))
      rmSync(join(this.clustersDir, old), { recursive: true, force: true });
    const dir = join(
      this.clustersDir,
      `${new Date(now).toISOString().replace(/[:.]/g, '-')}-${this.pid}`,
    );
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  all(): readonly RunRecord[] {
    return this.records;
  }

  /** Records what the master says of the cluster's applications (their state, end, failure). */
  observe(apps: readonly AppSummary[], clusterDir: string): void {
    const changed = apps.filter((a) => {
      const r = this.records.find((x) => x.appId === a.id);
      return (
        !r ||
        r.state !== a.state ||
        r.endTime !== a.endTime ||
        (a.failure !== undefined && r.failure === undefined)
      );
    });
    if (changed.length === 0) return;
    this.update(
      (r) => {
        const a = changed.find((x) => x.id === r.appId);
        return a ? { ...r, ...fromApp(a) } : r;
      },
      changed
        .filter((a) => !this.records.some((r) => r.appId === a.id))
        .map((a) => ({ ...fromApp(a), clusterDir, agentPid: this.pid })),
    );
  }

  /** The editor's submit of `appId`: its file and driver output. */
  noteSubmit(appId: string, file: string, outputId: string | undefined, clusterDir: string): void {
    const known = this.records.some((r) => r.appId === appId);
    const add = { file, ...(outputId ? { outputId } : {}) };
    this.update(
      (r) => (r.appId === appId ? { ...r, ...add } : r),
      known
        ? []
        : [
            {
              appId,
              name: appId,
              state: 'WAITING',
              startTime: Date.now(),
              clusterDir,
              agentPid: this.pid,
              ...add,
            },
          ],
    );
  }

  /** This agent's runs that have not ended: KILLED, with why (its cluster is ending). */
  endRunning(message: string, clusterDir?: string): void {
    const now = Date.now();
    this.update((r) =>
      r.agentPid === this.pid &&
      !ENDED.has(r.state) &&
      (clusterDir === undefined || r.clusterDir === clusterDir)
        ? { ...r, state: 'KILLED', endTime: now, message }
        : r,
    );
  }

  outputPath(outputId: string): string {
    return join(this.outputsDir, `${outputId}.log`);
  }

  /** Appends a driver's text to its run's output file, up to MAX_OUTPUT_BYTES. */
  appendOutput(outputId: string, text: string): void {
    const path = this.outputPath(outputId);
    let size = this.outputBytes.get(outputId);
    if (size === undefined) size = existsSync(path) ? statSync(path).size : 0;
    if (size >= MAX_OUTPUT_BYTES) return;
    let data = Buffer.from(text, 'utf8');
    if (size + data.length > MAX_OUTPUT_BYTES)
      data = Buffer.concat([
        data.subarray(0, MAX_OUTPUT_BYTES - size),
        Buffer.from('\n[… the rest of the output was not kept]\n'),
      ]);
    try {
      appendFileSync(path, data);
      this.outputBytes.set(outputId, size + data.length);
    } catch (err) {
      this.warn(`Could not keep the driver output in ${path}: ${(err as Error).message}`);
      this.outputBytes.set(outputId, MAX_OUTPUT_BYTES);
    }
  }

  /**
   * Applies `fn` to every record and adds `added`, over what the file holds now (another agent's
   * runs included), keeping the newest MAX_RUNS; writes only when something changed.
   */
  private update(fn: (r: RunRecord) => RunRecord, added: RunRecord[] = []): void {
    const onDisk = this.read();
    const mine = new Map(this.records.map((r) => [r.appId, r]));
    // Ours as we know them; theirs as the file says.
    const merged = new Map(onDisk.map((r) => [r.appId, mine.get(r.appId) ?? r]));
    for (const r of this.records) if (!merged.has(r.appId)) merged.set(r.appId, r);
    for (const r of added) merged.set(r.appId, r);
    let changed = added.length > 0 || merged.size !== onDisk.length;
    const next = [...merged.values()].map((r) => {
      const n = fn(r);
      if (n !== r) changed = true;
      return n;
    });
    next.sort((a, b) => b.startTime - a.startTime);
    for (const gone of next.splice(MAX_RUNS)) {
      if (gone.outputId) rmSync(this.outputPath(gone.outputId), { force: true });
    }
    this.records = next;
    if (!changed) return;
    const tmp = `${this.file}.${this.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify({ version: 1, runs: next }, null, 1)}\n`);
      renameSync(tmp, this.file);
    } catch (err) {
      this.warn(`Could not write ${this.file}: ${(err as Error).message}`);
    }
  }

  /** The records on disk; a file that is not ours is named and set aside (runs.json.bad). */
  private read(): RunRecord[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    try {
      const parsed = JSON.parse(text) as { runs?: unknown };
      if (!Array.isArray(parsed.runs)) throw new Error('expected {"version": 1, "runs": [...]}');
      return parsed.runs.filter(isRecord).slice(0, MAX_RUNS);
    } catch (err) {
      this.warn(
        `${this.file} is not a list of runs (${(err as Error).message}): set aside as runs.json.bad`,
      );
      try {
        renameSync(this.file, `${this.file}.bad`);
      } catch {}
      return [];
    }
  }
}

function fromApp(a: AppSummary): Omit<RunRecord, 'clusterDir' | 'agentPid'> {
  return {
    appId: a.id,
    name: a.name,
    state: a.state,
    startTime: a.startTime,
    ...(a.endTime !== undefined ? { endTime: a.endTime } : {}),
    ...(a.failure ? { failure: a.failure } : {}),
  };
}

/** A record as written by a RunStore: checked field by field, since the file is on disk. */
function isRecord(x: unknown): x is RunRecord {
  const r = x as Partial<RunRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.appId === 'string' &&
    /^app-[\w.-]{1,200}$/.test(r.appId) &&
    typeof r.name === 'string' &&
    r.name.length <= 1000 &&
    typeof r.state === 'string' &&
    r.state.length <= 20 &&
    typeof r.startTime === 'number' &&
    typeof r.clusterDir === 'string' &&
    typeof r.agentPid === 'number' &&
    (r.outputId === undefined ||
      (typeof r.outputId === 'string' && /^[\w-]{1,64}$/.test(r.outputId)))
  );
}
