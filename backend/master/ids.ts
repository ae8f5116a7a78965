import { idTimestamp } from '../util/ids.js';

export { idTimestamp };

export const appId = (ms: number, n: number) =>
  `app-${idTimestamp(ms)}-${String(n).padStart(4, '0')}`;
export const driverId = (ms: number, n: number) =>
  `driver-${idTimestamp(ms)}-${String(n).padStart(4, '0')}`;
