import type { LogSource } from './protocol.js';

/**
 * Hash routes, so that every view has a URL a user can bookmark or share and the back button
 * works, while the host serves one page: #/ #/workers #/apps #/drivers #/app/ID #/worker/ID
 * #/log?appId=…&executorId=…&logType=stdout (or driverId=…), Spark's log page parameters;
 * an application's job and stage attempt: #/app/ID/job/N, #/app/ID/stage/S/A.
 * A history server's listing shows its incomplete applications at #/?showIncomplete=true.
 */
export type Route =
  /** The history server's listing takes Spark's `?showIncomplete=true` (#/?showIncomplete=true). */
  | { name: 'overview'; showIncomplete?: boolean }
  | { name: 'workers' }
  | { name: 'apps' }
  | { name: 'drivers' }
  | { name: 'app'; id: string }
  | { name: 'job'; appId: string; jobId: number }
  | { name: 'stage'; appId: string; stageId: number; attemptId: number }
  | { name: 'worker'; id: string }
  | { name: 'log'; source: LogSource }
  | { name: 'notFound'; hash: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [path = '', query = ''] = raw.split('?', 2);
  const parts = path.split('/').filter(Boolean).map(safeDecode);
  if (parts.length === 0)
    return new URLSearchParams(query).get('showIncomplete') === 'true'
      ? { name: 'overview', showIncomplete: true }
      : { name: 'overview' };
  const [head, id, ...rest] = parts;
  if (head === 'app' && id && rest.length > 0) return appSubRoute(id, rest, hash);
  if (rest.length > 0) return { name: 'notFound', hash };
  switch (head) {
    case 'workers':
    case 'apps':
    case 'drivers':
      return id === undefined ? { name: head } : { name: 'notFound', hash };
    case 'app':
    case 'worker':
      return id ? { name: head, id } : { name: 'notFound', hash };
    case 'log': {
      const source = parseLogSource(new URLSearchParams(query));
      return source && id === undefined ? { name: 'log', source } : { name: 'notFound', hash };
    }
    default:
      return { name: 'notFound', hash };
  }
}

const NUMBER = /^\d{1,9}$/;

function appSubRoute(appId: string, rest: string[], hash: string): Route {
  const [kind, a, b, ...more] = rest;
  if (more.length > 0) return { name: 'notFound', hash };
  if (kind === 'job' && a !== undefined && NUMBER.test(a) && b === undefined)
    return { name: 'job', appId, jobId: Number(a) };
  if (kind === 'stage' && a !== undefined && NUMBER.test(a) && b !== undefined && NUMBER.test(b))
    return { name: 'stage', appId, stageId: Number(a), attemptId: Number(b) };
  return { name: 'notFound', hash };
}

export function parseLogSource(q: URLSearchParams): LogSource | undefined {
  const logType = q.get('logType') ?? 'stdout';
  if (logType !== 'stdout' && logType !== 'stderr') return undefined;
  const appId = q.get('appId');
  const executorId = q.get('executorId');
  const driverId = q.get('driverId');
  if (driverId && appId === null && executorId === null) return { driverId, logType };
  if (appId && executorId !== null && driverId === null && /^\d+$/.test(executorId)) {
    return { appId, executorId: Number(executorId), logType };
  }
  return undefined;
}

export function href(route: Route): string {
  switch (route.name) {
    case 'overview':
      return route.showIncomplete ? '#/?showIncomplete=true' : '#/';
    case 'workers':
    case 'apps':
    case 'drivers':
      return `#/${route.name}`;
    case 'app':
    case 'worker':
      return `#/${route.name}/${encodeURIComponent(route.id)}`;
    case 'job':
      return `#/app/${encodeURIComponent(route.appId)}/job/${route.jobId}`;
    case 'stage':
      return `#/app/${encodeURIComponent(route.appId)}/stage/${route.stageId}/${route.attemptId}`;
    case 'log':
      return logHref(route.source);
    case 'notFound':
      return route.hash;
  }
}

export function logHref(source: LogSource): string {
  const q = new URLSearchParams();
  if (source.driverId !== undefined) q.set('driverId', source.driverId);
  if (source.appId !== undefined) q.set('appId', source.appId);
  if (source.executorId !== undefined) q.set('executorId', String(source.executorId));
  q.set('logType', source.logType);
  return `#/log?${q}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
