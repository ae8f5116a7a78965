import type { MessageOf } from '../../backend/protocol/registry.js';
import type { MasterStateResponse } from '../../backend/protocol/state.js';

type State = MessageOf<typeof MasterStateResponse>;

/** A master's whole state as a client holds it: nothing in it but `parts`. */
export function masterState(parts: Partial<State> = {}): State {
  return {
    type: 'MasterStateResponse',
    seq: 0,
    url: 'wick://m:7077',
    webUiUrl: 'http://m:8080',
    status: 'ALIVE',
    workers: [],
    activeApps: [],
    completedApps: [],
    activeDrivers: [],
    completedDrivers: [],
    ...parts,
  } as State;
}
