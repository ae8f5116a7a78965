/**
 * The agent's core, apart from its transport: one client-mode RpcEnv, a MasterStateMirror whose
 * every change is pushed out, the embedded local cluster when the master is `local`, and log
 * follows from workers. The extension talks to it through backend/agent/protocol.ts; tests can
 * drive it directly. Nothing here polls.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { LogRouter } from '../client/LogRouter.js';
import { MasterSession } from '../client/MasterSession.js';
import { clientEnv } from '../client/masterConnection.js';
import { ReverseProxyConf } from '../conf/reverseProxy.js';
import { WickConf } from '../conf/WickConf.js';
import { HistoryProvider } from '../history/HistoryProvider.js';
import { type LocalCluster, startLocalCluster } from '../launcher/localClusterProcess.js';
import {
  MAX_API_PATH_LENGTH,
  RequestAppStatusApi,
  RequestKillApplication,
  RequestKillDriver,
} from '../protocol/client.js';
import { WORKER_ENDPOINT } from '../protocol/endpoints.js';
import { RequestLogRange, RequestWorkerState } from '../protocol/worker.js';
import { ensureClusterSecret, resolveClusterAuth } from '../rpc/clusterSecret.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { describeLogSource, logFields } from '../shared/logSource.js';
import { loginLink, MASTER_UI, workerUi } from '../shared/uiLogin.js';
import { checkApplication, compileError } from './checkApp.js';
import type { DriverOutputSink } from './driverOutput.js';
import { LogForwarder } from './LogForwarder.js';
import { localClusterConf } from './localClusterConf.js';
import { pastExecutorLog, readPastLog } from './pastRunLogs.js';
import { type LoggedPagesFactory, PastRunPages } from './pastRunPages.js';
import { pastRuns } from './pastRuns.js';
import type {
  Connection,
  ConnectParams,
  FollowLogParams,
  LoggedFailedTask,
  LogRange,
  LogRangeParams,
  LogSource,
  MasterState,
  PastRun,
  PastRunLog,
  SubmitParams,
  UiTarget,
  WorkerState,
} from './protocol.js';
import { RELOAD_MESSAGE, RunStore, STOPPED_MESSAGE } from './runStore.js';
import { submitApplication } from './submitApp.js';

export interface AgentSink extends DriverOutputSink {
  stateChanged(connection: Connection, state: MasterState | undefined): void;
  /** `base64` as the worker sent it (checked on receipt): passed on without decoding it. */
  logChunk(followId: string, offset: number, base64: string): void;
  logFollowEnded(followId: string, totalSize: number, reason: string): void;
  log(line: string): void;
  /** Where the submit with this output id stands ("Bundling…"), for the editor's progress. */
  submitProgress(outputId: string, message: string): void;
  /** The runs of earlier local clusters (after a reload), for the Applications view. */
  pastRunsChanged?(runs: PastRun[]): void;
}

const NO_PAST_RUNS =
  'This agent keeps no runs of earlier local clusters (the extension gives it a runs folder when it starts the local cluster)';

export class Agent {
  private env: RpcEnv | undefined;
  private session: MasterSession | undefined;
  private cluster: LocalCluster | undefined;
  private connection: Connection = { kind: 'disconnected' };
  private connecting: Promise<Connection> | undefined;
  private forwarder: LogForwarder | undefined;
  /** Which way each log is read (the worker, or the master's relay); made on connecting. */
  private router: LogRouter | undefined;
  private readonly children = new Set<{ kill(): unknown }>();
  private shuttingDown: Promise<void> | undefined;
  /** Temporary folders this agent made and has not removed yet (see removeTempDirsNow). */
  private readonly tempDirs = new Set<string>();
  /** The local cluster's runs, kept across windows (ConnectParams.runsDir). */
  private runs: RunStore | undefined;
  /** The running local cluster's work dir, when it is kept (under runsDir). */
  private clusterDir: string | undefined;
  private history: HistoryProvider | undefined;
  /** The past runs' pages and failed tasks, from their event logs (with the runs kept). */
  private pastPages: PastRunPages | undefined;
  /** Driver output goes to the extension, and (runs kept) into the run's file. */
  private readonly output: DriverOutputSink;

  constructor(
    private readonly sink: AgentSink,
    /** How a past run's pages are read from its log (the CLI hands in the history server's). */
    private readonly loggedPages?: LoggedPagesFactory,
  ) {
    this.output = {
      driverOutput: (id, stream, data) => {
        this.runs?.appendOutput(id, data);
        sink.driverOutput(id, stream, data);
      },
      driverExited: (id, code, reason) => {
        this.runs?.appendOutput(id, `\n[${reason}]\n`);
        sink.driverExited(id, code, reason);
      },
    };
  }

  get status(): { connection: Connection; state: MasterState | undefined; clusterDir?: string } {
    return {
      connection: this.connection,
      state: this.session?.state,
      ...(this.clusterDir ? { clusterDir: this.clusterDir } : {}),
    };
  }

  private set(connection: Connection): Connection {
    this.connection = connection;
    this.sink.stateChanged(
      connection,
      connection.kind === 'connected' ? this.session?.state : undefined,
    );
    return connection;
  }

  private async rpc(): Promise<RpcEnv> {
    if (!this.env) {
      this.env = await clientEnv(undefined, 'wickAgent');
      this.forwarder = new LogForwarder(this.sink);
      this.env.setupEndpoint('AgentLogs', this.forwarder);
    }
    return this.env;
  }

  connect(p: ConnectParams): Promise<Connection> {
    if (this.connection.kind === 'connected') return Promise.resolve(this.connection);
    this.connecting ??= this.doConnect(p).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async doConnect(p: ConnectParams): Promise<Connection> {
    // The local cluster's master would make the user's cluster secret; the agent, its client,
    // needs it first, so it makes it (the same file, so the master finds it).
    if (p.master === 'local' && !this.env) ensureClusterSecret(resolveClusterAuth(new WickConf()));
    const env = await this.rpc();
    this.router = new LogRouter(env, {
      reverseProxy: p.reverseProxy ?? false,
      workerConnectTimeoutMs: ReverseProxyConf.workerConnectTimeout.defaultValue,
    });
    let url = p.master;
    let webUiUrl = '';
    const local = p.master === 'local';
    try {
      if (local) {
        if (!this.cluster) {
          const l = p.localCluster;
          if (p.runsDir && !this.runs) this.openRuns(p.runsDir);
          this.set({
            kind: 'connecting',
            target: 'local',
            message: `Starting a local cluster (${l.workers} workers × ${l.cores} cores, ${l.memory})…`,
          });
          const shown = localClusterConf(l.readOnlyPaths);
          for (const s of shown.skipped)
            this.sink.log(`Not shown to the local cluster's applications: ${s}`);
          this.cluster = await startLocalCluster(
            {
              workers: l.workers,
              cores: String(l.cores),
              memory: l.memory,
              host: '127.0.0.1',
              port: '0',
              webuiPort: '0',
              workDir: this.runs
                ? this.keptClusterDir(this.runs)
                : this.tempDir(
                    join(tmpdir(), `wick-vscode-${process.pid}-${randomBytes(3).toString('hex')}`),
                  ),
              conf: shown.conf,
            },
            (line) => this.sink.log(line),
          );
          const cluster = this.cluster;
          void cluster.firstExit.then((d) => {
            if (this.cluster !== cluster) return;
            this.sink.log(`Local cluster daemon ${d.name} exited; see ${d.log}`);
          });
        }
        url = this.cluster.url;
        webUiUrl = this.cluster.webUiUrl;
      } else {
        this.set({ kind: 'connecting', target: url, message: `Connecting to ${url}…` });
      }
      const { session, snapshot } = await MasterSession.open(
        env,
        url,
        `AgentState-${randomBytes(4).toString('hex')}`,
      );
      this.session = session;
      session.onChange = (state) => {
        if (this.session !== session) return;
        if (local) this.observeRuns(state);
        this.sink.stateChanged(this.connection, state);
      };
      session.onFailover = (master) => {
        if (this.session !== session) return;
        const s = session.state;
        this.set({
          kind: 'connected',
          url: s?.url ?? `wick://${master.address}`,
          webUiUrl: s?.webUiUrl ?? '',
          local,
        });
      };
      session.onLost = (message) => {
        if (this.session !== session) return;
        this.session = undefined;
        this.set({ kind: 'error', target: url, message });
      };
      webUiUrl ||= snapshot.webUiUrl;
      const connected: Connection = { kind: 'connected', url: snapshot.url, webUiUrl, local };
      if (local) {
        this.observeRuns(session.state);
        void this.pushPastRuns();
      }
      return this.set(connected);
    } catch (err) {
      return this.set({ kind: 'error', target: url, message: (err as Error).message });
    }
  }

  async disconnect(stopLocalCluster: boolean): Promise<Connection> {
    this.session?.close();
    this.session = undefined;
    if (stopLocalCluster) await this.stopCluster();
    return this.set({ kind: 'disconnected' });
  }

  private async stopCluster(): Promise<void> {
    const c = this.cluster;
    this.cluster = undefined;
    if (!c) return;
    // Its runs end with it: said in their rows, not left RUNNING for ever.
    this.runs?.endRunning(STOPPED_MESSAGE, this.clusterDir);
    await c.stop();
    const workDir = join(c.logDir, '..');
    if (this.tempDirs.has(workDir))
      await rm(workDir, { recursive: true, force: true }).catch(() => {});
    this.tempDirs.delete(workDir);
    if (this.clusterDir) {
      // The stopped cluster's runs are past runs now.
      this.clusterDir = undefined;
      void this.pushPastRuns();
    }
  }

  private openRuns(dir: unknown): void {
    if (typeof dir !== 'string' || !isAbsolute(dir) || dir.length > 4096) {
      this.sink.log(
        `Runs will not be kept across windows: runsDir ${JSON.stringify(dir)?.slice(0, 200)} is not an absolute path (of at most 4096 characters)`,
      );
      return;
    }
    try {
      this.runs = new RunStore(dir, process.pid, (m) => this.sink.log(m));
      this.history = HistoryProvider.fromConf(new WickConf(), { warn: (m) => this.sink.log(m) });
      if (this.loggedPages)
        this.pastPages = new PastRunPages(
          this.runs,
          () => this.clusterDir,
          this.history,
          this.loggedPages,
          (appId) => {
            const s = this.session?.state;
            return !!s && [...s.activeApps, ...s.completedApps].some((a) => a.id === appId);
          },
        );
    } catch (err) {
      this.sink.log(`Runs will not be kept across windows: ${(err as Error).message}`);
    }
  }

  private keptClusterDir(runs: RunStore): string {
    this.clusterDir = runs.newClusterDir();
    return this.clusterDir;
  }

  private observeRuns(state: MasterState | undefined): void {
    if (!state || !this.runs || !this.clusterDir) return;
    this.runs.observe([...state.activeApps, ...state.completedApps], this.clusterDir);
  }

  /** The runs of earlier local clusters, from their records and event logs. */
  async pastRuns(): Promise<PastRun[]> {
    return this.runs ? pastRuns(this.runs, this.clusterDir, this.history) : [];
  }

  private async pushPastRuns(): Promise<void> {
    if (!this.runs || !this.sink.pastRunsChanged) return;
    try {
      this.sink.pastRunsChanged(await this.pastRuns());
    } catch (err) {
      this.sink.log(`The past runs could not be read: ${(err as Error).message}`);
    }
  }

  /** Notes a temporary folder of this agent's, to be removed however it ends. */
  private tempDir(path: string): string {
    this.tempDirs.add(path);
    return path;
  }

  /**
   * Removes, now, the temporary folders shutdown has not removed: the language server library
   * ends the process as soon as the client's `exit` comes, or its stdin closes, or the client's
   * process is gone, whether or not shutdown has finished (VS Code closing does not always wait
   * for it). For the process's 'exit' event; the local cluster's daemons end on their own then
   * (they watch their stdin).
   */
  removeTempDirsNow(): void {
    this.runs?.endRunning(RELOAD_MESSAGE);
    for (const dir of this.tempDirs) rmSync(dir, { recursive: true, force: true });
    this.tempDirs.clear();
  }

  private requireSession(): MasterSession {
    if (!this.session)
      throw new Error(
        this.connection.kind === 'error'
          ? this.connection.message
          : 'Not connected to a master: run "Wick: Start Local Cluster" or "Wick: Connect to Master…"',
      );
    return this.session;
  }

  /**
   * A web UI's address from the state the master pushed (never one the caller names), as a login
   * link when the cluster authenticates: the extension holds no secret, the agent does.
   */
  uiLink(t: UiTarget): { url: string; login: boolean } {
    const state = this.requireSession().state;
    if (!state) throw new Error('No state from the master yet');
    let base = state.webUiUrl;
    let route: string | undefined;
    // A login link opens the one UI it is made for (shared/uiLogin.ts).
    let audience = MASTER_UI;
    if (t?.kind === 'worker') {
      if (typeof t.workerId !== 'string' || t.workerId.length > 200)
        throw new Error(`Invalid worker id ${JSON.stringify(t.workerId)}: expected a worker's id`);
      const w = state.workers.find((x) => x.id === t.workerId);
      if (!w) throw new Error(`No worker ${t.workerId} is known to the master`);
      if (!/^https?:\/\//.test(w.webUiAddress))
        throw new Error(
          `Worker ${w.id} advertises no web UI address (${JSON.stringify(w.webUiAddress)}); its pages are under the master's ${state.webUiUrl}/proxy/${w.id}/`,
        );
      base = w.webUiAddress;
      audience = workerUi(w.id);
    } else if (t?.kind === 'app') {
      if (typeof t.appId !== 'string' || !/^app-[\w.-]{1,200}$/.test(t.appId))
        throw new Error(`Invalid application id ${JSON.stringify(t.appId)}: expected app-…`);
      route = `#/app/${encodeURIComponent(t.appId)}`;
    } else if (t?.kind !== 'master') {
      throw new Error(`Invalid web UI target ${JSON.stringify(t)}: expected master, worker or app`);
    }
    const auth = resolveClusterAuth(new WickConf());
    const secret = auth.mode === 'secret' ? auth.secret : undefined;
    // Logged in, the login page moves on to the route itself (a fragment does not follow it).
    return secret === undefined
      ? { url: route ? `${base.replace(/\/$/, '')}/${route}` : base, login: false }
      : { url: loginLink(base, secret, Date.now(), route, audience), login: true };
  }

  /**
   * A worker's own state (its runners, finished ones included), asked of the worker itself, as
   * the master's web UI asks it for its worker page: the dashboard panel's worker page.
   */
  async workerState(workerId: string): Promise<WorkerState> {
    const state = this.requireSession().state;
    if (typeof workerId !== 'string' || workerId.length > 200)
      throw new Error(`Invalid worker id ${JSON.stringify(workerId)}: expected a worker's id`);
    const w = state?.workers.find((x) => x.id === workerId);
    if (!w) throw new Error(`No worker ${workerId} is known to the master`);
    const env = await this.rpc();
    const ref = env.endpointRef({ address: `${w.host}:${w.port}`, name: WORKER_ENDPOINT });
    return ref.ask(RequestWorkerState({}), { timeout: 10_000 });
  }

  /**
   * The master's /api/v1 at `path`, asked of the master over this agent's connection (the
   * panel cannot reach the web UI, nor hold its login). The path is checked here with the
   * message's own schema, so a bad one is told before it goes out.
   */
  async appStatusApi(path: string): Promise<{ status: number; body: string }> {
    if (typeof path !== 'string' || !Value.Check(RequestAppStatusApi.schema.properties.path, path))
      throw new Error(
        `Invalid /api/v1 path ${JSON.stringify(String(path).slice(0, 200))}: expected /applications/… (up to ${MAX_API_PATH_LENGTH} characters)`,
      );
    // A run of an earlier local cluster: from its event log, connected or not.
    const past = this.pastPages?.pastRunOfPath(path);
    if (past && this.pastPages) return this.pastPages.api(past, path);
    const master = this.requireSession().master;
    const r = await master.ask(RequestAppStatusApi({ path }), { timeout: 30_000 });
    return { status: r.status, body: r.body };
  }

  /** A past run's event log, for its page in the panel (pastRunPages.ts). */
  pastRunLog(appId: string): Promise<{ log?: PastRunLog; reason?: string }> {
    return this.pastPages ? this.pastPages.log(appId) : Promise.resolve({ reason: NO_PAST_RUNS });
  }

  /** A past run's failed task, from its event log: Debug Failed Task's (pastRunPages.ts). */
  pastRunFailedTask(appId: string): Promise<{ task?: LoggedFailedTask; reason?: string }> {
    return this.pastPages
      ? this.pastPages.failedTask(appId)
      : Promise.resolve({ reason: NO_PAST_RUNS });
  }

  async kill(id: string): Promise<{ success: boolean; message: string }> {
    const master = this.requireSession().master;
    if (id.startsWith('app-')) return master.ask(RequestKillApplication({ appId: id }));
    if (id.startsWith('driver-')) return master.ask(RequestKillDriver({ driverId: id }));
    return { success: false, message: `Cannot kill "${id}": expected app-… or driver-…` };
  }

  /** Bundles an application without a master, for its syntax errors (checkApp.ts). */
  check(p: { file: string; outputId?: string }) {
    return checkApplication(p, this.output);
  }

  async submit(p: SubmitParams) {
    const session = this.requireSession();
    const env = await this.rpc();
    const r = await this.submitTo(session, env, p);
    if (
      r.appId &&
      this.runs &&
      this.clusterDir &&
      this.connection.kind === 'connected' &&
      this.connection.local
    )
      this.runs.noteSubmit(r.appId, p.file, p.outputId, this.clusterDir);
    return r;
  }

  private submitTo(session: MasterSession, env: RpcEnv, p: SubmitParams) {
    return submitApplication(p, {
      master: session.master,
      masterUrl: (this.connection as { url: string }).url,
      mirror: session.mirror,
      env,
      track: (child) => {
        this.children.add(child);
        return () => this.children.delete(child);
      },
      log: (l) => this.sink.log(l),
      compileError,
      progress: (message) => {
        if (p.outputId) this.sink.submitProgress(p.outputId, message);
      },
      output: this.output,
      follow: async (source, stream, handlers) =>
        (this.forwarder as LogForwarder).follow(
          await this.logEndpoint(source),
          { source, stream, offset: 0 },
          handlers,
        ),
    });
  }

  /**
   * Where a log's messages go, from the mirrored state: the worker that holds it, or the master's
   * relay when that worker cannot be reached from here (the reason goes to the output channel).
   */
  private async logEndpoint(source: LogSource): Promise<RpcEndpointRef> {
    const state = this.session?.state;
    if (!state || !this.session || !this.router) throw new Error('Not connected to a master');
    const route = await this.router.route(state, source, this.session.master);
    if (route.via === 'master' && route.reason) {
      this.sink.log(
        `Reading ${describeLogSource(source)}'s log through the master: ${route.reason}`,
      );
    }
    return route.ref;
  }

  /** A past run's executor log (the panel's log page), from the work dir the agent kept. */
  private pastLog(source: LogSource, stream: unknown): string | undefined {
    if ('driverId' in source || !this.runs || !this.pastPages?.isPastRun(source.appId))
      return undefined;
    return pastExecutorLog(this.runs, source.appId, source.execId, stream);
  }

  async logRange(p: LogRangeParams): Promise<LogRange> {
    const past = p?.source && this.pastLog(p.source, p.stream);
    if (past) return readPastLog(past, describeLogSource(p.source), p.offset, p.length);
    const r = await (await this.logEndpoint(p.source)).ask(
      RequestLogRange({
        ...logFields(p.source, p.stream),
        length: p.length,
        ...(p.offset !== undefined ? { offset: p.offset } : {}),
      }),
    );
    return { data: r.data, offset: r.offset, totalSize: r.totalSize };
  }

  async followLog(p: FollowLogParams): Promise<{ totalSize: number }> {
    const past = p?.source && this.pastLog(p.source, p.stream);
    if (past) {
      // Its run ended with its cluster: the log is whole; the follow ends once answered.
      const { totalSize } = await readPastLog(past, describeLogSource(p.source), undefined, 0);
      setImmediate(() =>
        this.sink.logFollowEnded(
          p.followId,
          totalSize,
          'the run ended in an earlier session: its log is complete',
        ),
      );
      return { totalSize };
    }
    await this.rpc();
    const forwarder = this.forwarder as LogForwarder;
    return forwarder.forward(await this.logEndpoint(p.source), p);
  }

  stopFollowLog(followId: string): void {
    this.forwarder?.stop(followId);
  }

  /**
   * Stops everything this agent started: follows, submit children, the local cluster (and its
   * work dir), the env. Once: the client's `shutdown` request and the agent's own ways out
   * (SIGTERM, stdin closing) may both call it, and a way out then waits for the work under way
   * instead of ending the process halfway through it. (The language server library ends the
   * process on `exit` without waiting for anything: removeTempDirsNow covers that.)
   */
  shutdown(): Promise<void> {
    this.shuttingDown ??= this.stopEverything();
    return this.shuttingDown;
  }

  private async stopEverything(): Promise<void> {
    // The window is going (a reload, a close): the local cluster ends with this agent, and so
    // do its runs. Said in their records before anything stops, for the next window to show.
    this.runs?.endRunning(RELOAD_MESSAGE);
    this.history?.stop();
    this.forwarder?.stopAll();
    for (const c of this.children) c.kill();
    this.session?.close();
    await this.stopCluster();
    await this.env?.stop();
  }
}
