/**
 * The history service's routes over a HistoryProvider: Spark's `/api/v1/applications` (the
 * listing, with Spark's query: status, minDate, maxDate, minEndDate, maxEndDate, limit) and
 * `/api/v1/version`. One function taking the provider, so that the per-application routes
 * (`/api/v1/applications/{app}/jobs`, …: backend/http/apiV1.ts, built over an AppStatusSource)
 * mount beside these over the same provider, the provider's `forEachEvent` feeding each store.
 */
import type { Hono } from 'hono';
import {
  applicationInfoJson,
  parseApplicationQuery,
  selectApplications,
} from '../history/applicationInfoJson.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import { version } from '../util/version.js';

export function mountHistoryApi(app: Hono, provider: HistoryProvider, now = Date.now): void {
  const list = (c: import('hono').Context) => {
    let query: ReturnType<typeof parseApplicationQuery>;
    try {
      query = parseApplicationQuery(c.req.query());
    } catch (err) {
      return c.json({ error: 'bad request', message: (err as Error).message }, 400);
    }
    const apps = selectApplications(provider.applications(), query, now());
    return c.json(apps.map((a) => applicationInfoJson(a, version)));
  };
  app.get('/api/v1/applications', list);
  app.get('/api/v1/applications/', list);
  // Spark's VersionInfo is {"spark": …}: tools read that field; Wick's own version is in it.
  app.get('/api/v1/version', (c) => c.json({ spark: version }));
}
