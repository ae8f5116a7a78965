/**
 * Spark's monitoring REST API (`/api/v1`, Spark's ApiRootResource) over an AppStatusSource: the
 * master's web UI mounts it over the master's stores, and a history server can mount it over its
 * event logs. Spark's paths, query parameters and JSON (appstatus/sparkApi.ts); an application,
 * job or stage it does not know is a 404 whose JSON names the id, a bad parameter a 400 that
 * quotes the value and says what was expected. Authenticated as the rest of the UI: it is mounted
 * on the UiServer after its login check.
 */
import { type Context, Hono } from 'hono';
import type { AppStatusSource } from '../appstatus/AppStatusSource.js';
import { summaryOfStore } from '../appstatus/AppStatusSource.js';
import type { AppStatusStore, LiveStage, TaskStatus } from '../appstatus/AppStatusStore.js';
import {
  applicationInfo,
  DEFAULT_QUANTILES,
  environmentInfo,
  executorSummary,
  jobData,
  stageData,
  type TaskSorting,
  taskList,
  taskSummary,
} from '../appstatus/sparkApi.js';
import { version } from '../util/version.js';

/** The most tasks one taskList page returns (Spark's has no cap; a page of a huge stage must). */
export const MAX_TASK_LIST_LENGTH = 10_000;

const JOB_STATUSES = ['running', 'succeeded', 'failed', 'unknown'];
const STAGE_STATUSES = ['active', 'complete', 'pending', 'failed', 'skipped'];
const TASK_STATUSES = ['running', 'success', 'failed', 'killed'];
/** The most quantiles one taskSummary asks (a chart's worth: every percentile). */
export const MAX_QUANTILES = 101;

class NotFound extends Error {}
class BadRequest extends Error {}

/** Mounts `/api/v1` on `app`; `source()` is undefined while the UI is starting (503). */
export function mountApiV1(app: Hono, source: () => AppStatusSource | undefined): void {
  const route = (
    path: string,
    answer: (c: Context, src: AppStatusSource) => Promise<unknown> | unknown,
  ) => {
    app.get(`/api/v1${path}`, async (c) => {
      const src = source();
      if (!src) return c.json({ error: 'The web UI is starting' }, 503);
      try {
        return c.json(await answer(c, src));
      } catch (err) {
        if (err instanceof NotFound) return c.json({ error: err.message }, 404);
        if (err instanceof BadRequest) return c.json({ error: err.message }, 400);
        throw err;
      }
    });
  };
  const storeOf = async (c: Context, src: AppStatusSource): Promise<AppStatusStore> => {
    const id = c.req.param('app') ?? '';
    const store = await src.store(id);
    if (!store) throw new NotFound(`unknown app: ${id}`);
    return store;
  };

  route('/applications', async (_c, src) =>
    (await src.applications()).map((a) => applicationInfo(a, version)),
  );
  route('/applications/:app', async (c, src) => {
    const store = await storeOf(c, src);
    const id = c.req.param('app') ?? '';
    const listed = (await src.applications()).find((a) => a.id === id);
    return applicationInfo(listed ?? summaryOfStore(id, store, false), version);
  });
  route('/applications/:app/jobs', async (c, src) => {
    const store = await storeOf(c, src);
    const wanted = statuses(c, JOB_STATUSES);
    return store
      .jobList()
      .filter((j) => !wanted || wanted.has(j.status.toLowerCase()))
      .map(jobData);
  });
  route('/applications/:app/jobs/:jobId', async (c, src) => {
    const store = await storeOf(c, src);
    const jobId = integer(c, 'jobId');
    const job = store.job(jobId);
    if (!job) throw new NotFound(`unknown job: ${jobId}`);
    return jobData(job);
  });
  route('/applications/:app/stages', async (c, src) => {
    const store = await storeOf(c, src);
    const wanted = statuses(c, STAGE_STATUSES);
    const details = c.req.query('details') === 'true';
    return store
      .stageList()
      .filter((s) => !wanted || wanted.has(s.status.toLowerCase()))
      .map((s) => stageData(s, details));
  });
  route('/applications/:app/stages/:stageId', async (c, src) => {
    const store = await storeOf(c, src);
    const stageId = integer(c, 'stageId');
    const attempts = store.stageAttemptsOf(stageId);
    if (attempts.length === 0) throw new NotFound(`unknown stage: ${stageId}`);
    const details = c.req.query('details') !== 'false';
    return attempts.map((s) => stageData(s, details));
  });
  const attemptOf = async (c: Context, src: AppStatusSource) => {
    const store = await storeOf(c, src);
    const stageId = integer(c, 'stageId');
    const attempt = integer(c, 'attempt');
    const stage = store.stage(stageId, attempt);
    if (!stage) {
      if (store.stageAttemptsOf(stageId).length === 0)
        throw new NotFound(`unknown stage: ${stageId}`);
      throw new NotFound(`unknown attempt ${attempt} of stage ${stageId}`);
    }
    return { store, stage };
  };
  route('/applications/:app/stages/:stageId/:attempt', async (c, src) => {
    const { stage } = await attemptOf(c, src);
    return stageData(stage, c.req.query('details') !== 'false');
  });
  route('/applications/:app/stages/:stageId/:attempt/taskList', async (c, src) => {
    const { store, stage } = await attemptOf(c, src);
    return tasksOf(c, store, stage);
  });
  route('/applications/:app/stages/:stageId/:attempt/taskSummary', async (c, src) => {
    const { stage } = await attemptOf(c, src);
    const summary = taskSummary(stage, quantilesOf(c));
    if (!summary) throw new NotFound(`no task of stage ${stage.stageId} has succeeded yet`);
    return summary;
  });
  route('/applications/:app/executors', async (c, src) =>
    (await storeOf(c, src))
      .executors()
      .filter((e) => e.isActive)
      .map(executorSummary),
  );
  route('/applications/:app/allexecutors', async (c, src) =>
    (await storeOf(c, src)).executors().map(executorSummary),
  );
  route('/applications/:app/environment', async (c, src) => environmentInfo(await storeOf(c, src)));
}

/**
 * The same routes answered in this process, without a socket or a login (the caller checked who
 * asks): the master's RPC for clients that cannot reach its web UI (RequestAppStatusApi).
 */
export function apiV1Answerer(
  source: () => AppStatusSource | undefined,
): (path: string) => Promise<{ status: number; body: string }> {
  const app = new Hono();
  mountApiV1(app, source);
  return async (path) => {
    const res = await app.request(`/api/v1${path}`);
    return { status: res.status, body: await res.text() };
  };
}

function tasksOf(c: Context, store: AppStatusStore, stage: LiveStage) {
  const offset = query(c, 'offset', 0, Number.MAX_SAFE_INTEGER, 0);
  const length = query(c, 'length', 1, MAX_TASK_LIST_LENGTH, 20);
  const sortBy = c.req.query('sortBy') ?? 'ID';
  if (sortBy !== 'ID' && sortBy !== 'runtime' && sortBy !== '-runtime') {
    throw new BadRequest(`sortBy=${JSON.stringify(sortBy)}: expected ID, runtime or -runtime`);
  }
  const wanted = statuses(c, TASK_STATUSES);
  const status = wanted && new Set([...wanted].map((s) => s.toUpperCase() as TaskStatus));
  const hosts = new Map(store.executors().map((e) => [e.id, e.host]));
  return taskList(stage, (id) => hosts.get(id), {
    offset,
    length,
    sortBy: sortBy as TaskSorting,
    ...(status ? { status } : {}),
  });
}

/** `?quantiles=0.05,0.5,0.95` (Spark's), each from 0 to 1; none given: Spark's five. */
function quantilesOf(c: Context): number[] {
  const raw = c.req.query('quantiles');
  if (raw === undefined) return DEFAULT_QUANTILES;
  const parts = raw.split(',');
  const qs = parts.map(Number);
  if (
    raw.length > 2000 ||
    parts.length > MAX_QUANTILES ||
    parts.some((p) => !/^(0|1|0?\.\d{1,6}|1\.0{1,6})$/.test(p.trim())) ||
    qs.some((q) => !(q >= 0 && q <= 1))
  ) {
    throw new BadRequest(
      `quantiles=${JSON.stringify(raw.slice(0, 200))}: expected up to ${MAX_QUANTILES} numbers from 0 to 1, comma-separated`,
    );
  }
  return qs;
}

function integer(c: Context, name: string): number {
  const raw = c.req.param(name) ?? '';
  if (!/^\d{1,15}$/.test(raw)) {
    throw new BadRequest(`${name} ${JSON.stringify(raw)}: expected a whole number`);
  }
  return Number(raw);
}

function query(c: Context, name: string, min: number, max: number, dflt: number): number {
  const raw = c.req.query(name);
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!/^\d{1,16}$/.test(raw) || n < min || n > max) {
    throw new BadRequest(
      `${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`,
    );
  }
  return n;
}

/** `?status=a&status=b` as a set, checked against `allowed`; none given: undefined (all). */
function statuses(c: Context, allowed: string[]): Set<string> | undefined {
  const given = c.req.queries('status');
  if (!given || given.length === 0) return undefined;
  const set = new Set<string>();
  for (const s of given) {
    const v = s.toLowerCase();
    if (!allowed.includes(v)) {
      throw new BadRequest(`status=${JSON.stringify(s)}: expected one of ${allowed.join(', ')}`);
    }
    set.add(v);
  }
  return set;
}
