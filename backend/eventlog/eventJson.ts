/**
 * An event as the event log writes it: the JSON text of JSON.stringify(event), made faster for the
 * two events every task posts (TaskStart and TaskEnd). JSON.stringify over these small objects of
 * several shapes (TaskEnd's optional fields are set one by one) was the largest part of what an
 * event log cost a driver per task (bench/lib/watchedProfile.ts): about 1 µs an event, against
 * a third of that for text built from the known fields. Every other event goes through
 * JSON.stringify, as does any task event with a value of a type the schema does not allow, so
 * that the text is always JSON.stringify's (the same keys, values and order for the events the
 * DriverEndpoint makes; test/eventlog/eventJson.test.ts compares the two).
 */
import type {
  WickListenerEvent,
  WickListenerTaskEnd,
  WickListenerTaskStart,
} from '../protocol/listener.js';

/**
 * Each task event's fields, in the order the DriverEndpoint sets them (JSON.stringify's order for
 * its objects). `satisfies` makes a field added to the schema a compile error here until it is
 * written below too.
 */
const taskStartFields = {
  event: 0,
  taskId: 1,
  stageId: 2,
  stageAttemptId: 3,
  index: 4,
  attempt: 5,
  executorId: 6,
  time: 7,
} as const satisfies Record<keyof WickListenerTaskStart, number>;
const taskEndFields = {
  event: 0,
  taskId: 1,
  executorId: 2,
  state: 3,
  jobId: 4,
  durationMs: 5,
  metrics: 6,
  stageId: 7,
  stageAttemptId: 8,
  index: 9,
  error: 10,
} as const satisfies Record<keyof WickListenerTaskEnd, number>;

/** The JSON text of `event` (one line: JSON.stringify never writes a raw line break). */
export function eventJson(event: unknown): string {
  const e = event as WickListenerEvent;
  if (e !== null && typeof e === 'object') {
    if (e.event === 'WickListenerTaskStart') return taskStart(e) ?? JSON.stringify(e);
    if (e.event === 'WickListenerTaskEnd') return taskEnd(e) ?? JSON.stringify(e);
  }
  return JSON.stringify(event);
}

function taskStart(e: WickListenerTaskStart): string | undefined {
  const { taskId, stageId, stageAttemptId, index, attempt, executorId, time } = e;
  if (
    !(
      isNum(taskId) &&
      isNum(stageId) &&
      isNum(stageAttemptId) &&
      isNum(index) &&
      isNum(attempt) &&
      typeof executorId === 'string' &&
      isNum(time) &&
      inOrder(e, taskStartFields)
    )
  )
    return undefined;
  return `{"event":"WickListenerTaskStart","taskId":${taskId},"stageId":${stageId},"stageAttemptId":${stageAttemptId},"index":${index},"attempt":${attempt},"executorId":${JSON.stringify(executorId)},"time":${time}}`;
}

function taskEnd(e: WickListenerTaskEnd): string | undefined {
  const { taskId, executorId, state, jobId, durationMs, metrics, stageId, stageAttemptId } = e;
  const { index, error } = e;
  if (
    !(
      isNum(taskId) &&
      typeof executorId === 'string' &&
      typeof state === 'string' &&
      optNum(jobId) &&
      optNum(durationMs) &&
      (metrics === undefined || (metrics !== null && typeof metrics === 'object')) &&
      optNum(stageId) &&
      optNum(stageAttemptId) &&
      optNum(index) &&
      (error === undefined || typeof error === 'string') &&
      inOrder(e, taskEndFields)
    )
  )
    return undefined;
  let s = `{"event":"WickListenerTaskEnd","taskId":${taskId},"executorId":${JSON.stringify(executorId)},"state":${JSON.stringify(state)}`;
  if (jobId !== undefined) s += `,"jobId":${jobId}`;
  if (durationMs !== undefined) s += `,"durationMs":${durationMs}`;
  if (metrics !== undefined) s += `,"metrics":${JSON.stringify(metrics)}`;
  if (stageId !== undefined) s += `,"stageId":${stageId}`;
  if (stageAttemptId !== undefined) s += `,"stageAttemptId":${stageAttemptId}`;
  if (index !== undefined) s += `,"index":${index}`;
  if (error !== undefined) s += `,"error":${JSON.stringify(error)}`;
  return `${s}}`;
}

/** A number JSON writes as JavaScript does (NaN and ±Infinity it writes as null). */
function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function optNum(v: unknown): boolean {
  return v === undefined || isNum(v);
}

/**
 * Whether `e` is a plain object whose keys are all the schema's, in the order written above: then
 * the text built above is JSON.stringify's, key for key. Anything else (another key, another
 * order, another prototype) goes through JSON.stringify whole. A for-in loop allocates nothing.
 */
function inOrder(e: object, ranks: Readonly<Record<string, number>>): boolean {
  if (Object.getPrototypeOf(e) !== Object.prototype) return false;
  let last = -1;
  for (const k in e) {
    // typeof: a key such as `constructor` finds Object.prototype's through `ranks`.
    const r = ranks[k];
    if (typeof r !== 'number' || r <= last) return false;
    last = r;
  }
  return true;
}
