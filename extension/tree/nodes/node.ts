import type { Connection, MasterState } from '../../../backend/agent/protocol.js';
import type {
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
      severity: 'error' | 'info';
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
  | { kind: 'output'; appId: string };

export interface Model {
  connection: Connection;
  state?: MasterState;
  now: number;
  /** The applications submitted from this window, which have a driver output here. */
  outputs?: ReadonlySet<string>;
  /** What the Applications view leaves out (its filter, and Clear Completed). */
  filter?: AppFilter;
}

export interface AppFilter {
  /** The application states shown; all when absent. */
  states?: readonly string[];
  /** Completed applications and drivers cleared from this window (Clear Completed). */
  cleared?: ReadonlySet<string>;
}
