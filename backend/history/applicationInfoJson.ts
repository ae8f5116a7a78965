/**
 * `/api/v1/applications` in Spark's shape (status/api/v1/api.scala: ApplicationInfo with its
 * ApplicationAttemptInfo list; ApplicationListResource for the query), so that a tool written for
 * Spark's history server reads Wick's. Dates as Spark writes them (`2026-12-07T10:00:00.000GMT`);
 * a running attempt's end is Spark's -1 (`1969-12-31T23:59:59.999GMT`) with duration 0. Wick
 * applications have one attempt and no attempt id, as Spark's standalone ones. Pure.
 */
import type { ApplicationListing } from './readListing.js';

export interface ApplicationAttemptInfoJson {
  startTime: string;
  endTime: string;
  lastUpdated: string;
  duration: number;
  sparkUser: string;
  completed: boolean;
  appSparkVersion: string;
  startTimeEpoch: number;
  endTimeEpoch: number;
  lastUpdatedEpoch: number;
}

export interface ApplicationInfoJson {
  id: string;
  name: string;
  attempts: ApplicationAttemptInfoJson[];
}

/** Spark's SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'GMT'") in GMT. */
export function sparkDate(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, -1)}GMT`;
}

export function applicationInfoJson(a: ApplicationListing, version: string): ApplicationInfoJson {
  const end = a.completed && a.endTime !== undefined ? a.endTime : -1;
  return {
    id: a.appId,
    name: a.name,
    attempts: [
      {
        startTime: sparkDate(a.startTime),
        endTime: sparkDate(end),
        lastUpdated: sparkDate(a.lastUpdated),
        duration: end >= 0 ? Math.max(0, end - a.startTime) : 0,
        sparkUser: a.user,
        completed: a.completed,
        appSparkVersion: version,
        startTimeEpoch: a.startTime,
        endTimeEpoch: end,
        lastUpdatedEpoch: a.lastUpdated,
      },
    ],
  };
}

/** The query of `/api/v1/applications`, parsed; a bad value is an error naming it. */
export interface ApplicationQuery {
  status: 'completed' | 'running' | undefined;
  minDate: number;
  maxDate: number;
  minEndDate: number;
  maxEndDate: number;
  limit: number | undefined;
}

/** Spark's defaults: 2010-01-01 to 3000-01-01. */
const MIN_DATE = Date.UTC(2010, 0, 1);
const MAX_DATE = Date.UTC(3000, 0, 1);

export function parseApplicationQuery(q: Record<string, string | undefined>): ApplicationQuery {
  const status = q.status?.toLowerCase();
  if (status !== undefined && status !== 'completed' && status !== 'running') {
    throw new Error(`status must be "completed" or "running", got ${JSON.stringify(q.status)}`);
  }
  let limit: number | undefined;
  if (q.limit !== undefined) {
    limit = /^\d{1,9}$/.test(q.limit) ? Number(q.limit) : Number.NaN;
    if (!Number.isInteger(limit) || limit < 0) {
      throw new Error(`limit must be a whole number of 0 or more, got ${JSON.stringify(q.limit)}`);
    }
  }
  return {
    status,
    minDate: dateParam('minDate', q.minDate, MIN_DATE),
    maxDate: dateParam('maxDate', q.maxDate, MAX_DATE),
    minEndDate: dateParam('minEndDate', q.minEndDate, MIN_DATE),
    maxEndDate: dateParam('maxEndDate', q.maxEndDate, MAX_DATE),
    limit,
  };
}

/** Spark's SimpleDateParam: `2015-02-03T16:42:40.000GMT`, `2015-02-03`, or epoch ms. */
function dateParam(name: string, raw: string | undefined, dflt: number): number {
  if (raw === undefined) return dflt;
  const v = raw.trim();
  let t = Number.NaN;
  if (/^\d{1,15}$/.test(v)) t = Number(v);
  else if (/^\d{4}-\d{2}-\d{2}$/.test(v)) t = Date.parse(`${v}T00:00:00.000Z`);
  else {
    const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)(GMT|Z)?$/.exec(v);
    if (m) t = Date.parse(`${m[1]}Z`);
  }
  if (!Number.isFinite(t)) {
    throw new Error(
      `${name} must be a date such as 2026-12-07, 2026-12-07T10:00:00.000GMT or ms since the epoch, got ${JSON.stringify(raw)}`,
    );
  }
  return t;
}

/** The applications the query selects, in the order given (Spark's ApplicationListResource). */
export function selectApplications(
  apps: readonly ApplicationListing[],
  q: ApplicationQuery,
  now: number,
): ApplicationListing[] {
  const out = apps.filter((a) => {
    if (q.status === 'completed' && !a.completed) return false;
    if (q.status === 'running' && a.completed) return false;
    const startOk = a.startTime >= q.minDate && a.startTime <= q.maxDate;
    const endOk =
      a.completed && a.endTime !== undefined
        ? a.endTime >= q.minEndDate && a.endTime <= q.maxEndDate
        : q.maxEndDate > now;
    return startOk && endOk;
  });
  return q.limit === undefined ? out : out.slice(0, q.limit);
}
