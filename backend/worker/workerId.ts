import { idTimestamp } from '../util/ids.js';

/** A worker's id, from its start time and address (Spark's Worker.generateWorkerId). */
export const workerId = (ms: number, host: string, port: number) =>
  `worker-${idTimestamp(ms)}-${host}-${port}`;
