import type { Connection, MasterState, PastRun } from '../../../backend/agent/protocol.js';
import type { AppFailure } from '../../../backend/protocol/common.js';
import type {
  AppProgress,
  AppSummary,
  DriverSummary,
  ExecutorSummary,
  MasterEntry,
  WorkerSummary,
} from '../../../backend/protocol/state.js';

/** Every kind of node in the two Wick views: a tagged union; each kind has its own file. */
export type Node =
  | {
      kind: 'message';
      id: string;
      text: string;
      detail?: string;
      action?: { command: string; title: string };
      /** info: something under way (a spinner); note: a fact, as "logs removed". */
      severity: 'error' | 'info' | 'note';
    }
  | { kind: 'master'; state: MasterState; connection: Extract<Connection, { kind: 'connected' }> }
  | { kind: 'peer'; master: MasterEntry }
  | { kind: 'worker'; worker: WorkerSummary }
  | { kind: 'group'; group: 'running' | 'waiting' | 'completed' | 'drivers'; count: number }
  | { kind: 'app'; app: AppSummary }
  | { kind: 'executor'; exec: ExecutorSummary; app?: AppSummary; under: 'app' | 'worker' }
  | { kind: 'driver'; driver: DriverSummary; under: 'drivers' | 'worker' }
  | {
      kind: 'log';
      stream: 'stdout' | 'stderr';
      owner: { appId: string; execId: number } | { driverId: string };
      running: boolean;
    }
  | { kind: 'output'; appId: string }
  /** A running job of a running application, with its running stages as children. */
  | { kind: 'job'; appId: string; job: AppProgress['activeJobs'][number]; stages: ActiveStage[] }
  | { kind: 'stage'; appId: string; stage: ActiveStage }
  /** Why an application failed (its task's error and stack): opens them, one click. */
  | { kind: 'failure'; appId: string; name: string; failure: AppFailure }
  /** A run of an earlier local cluster (before a reload or a restart), from the agent's records. */
  | { kind: 'run'; run: PastRun }
  /** A file a past run left (its driver output, an executor's log): opens it. */
  | { kind: 'file'; id: string; label: string; path: string; icon: string };

export type ActiveStage = AppProgress['activeStages'][number];

export interface Model {
  connection: Connection;
  state?: MasterState;
  now: number;
  /** The applications submitted from this window, which have a driver output here. */
  outputs?: ReadonlySet<string>;
  /** What the Applications view leaves out (its filter, and Clear Completed). */
  filter?: AppFilter;
  /** The runs of earlier local clusters of this folder's windows, newest first. */
  pastRuns?: readonly PastRun[];
}

export interface AppFilter {
  /** The application states shown; all when absent. */
  states?: readonly string[];
  /** Completed applications and drivers cleared from this window (Clear Completed). */
  cleared?: ReadonlySet<string>;
}
