/** `yyyyMMddHHmmss` in local time, as Spark's ids use. */
export function idTimestamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export const appId = (ms: number, n: number) =>
  `app-${idTimestamp(ms)}-${String(n).padStart(4, '0')}`;
export const driverId = (ms: number, n: number) =>
  `driver-${idTimestamp(ms)}-${String(n).padStart(4, '0')}`;
export const workerId = (ms: number, host: string, port: number) =>
  `worker-${idTimestamp(ms)}-${host}-${port}`;
