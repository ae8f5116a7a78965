import { type TSchema, Type } from '@sinclair/typebox';

/**
 * The bounds of every field of Wick's protocol, in one place. A peer is whatever completes the
 * handshake, so nothing it sends may cost the receiver more than these allow: a message outside
 * them is refused with InvalidParams naming the field, its value and the bound (registry.ts
 * validateMessage), before any handler sees it. Each bound is a real-world limit with room to
 * spare, and docs/protocol.md ("Bounds") lists them; test/protocol/bounds.test.ts fails for a
 * field without one.
 */

// Strings

/** Application, driver, worker and executor ids (a worker's holds its host, up to 253). */
export const MAX_ID_LENGTH = 300;
/** A host name or address: the longest DNS name (RFC 1035). */
export const MAX_HOST_LENGTH = 253;
/** An RpcEnv's `host:port` or `client-<id>`, an endpoint's name. */
export const MAX_ADDRESS_LENGTH = 300;
/** A URL (wick://, http://): what browsers and proxies reliably carry. */
export const MAX_URL_LENGTH = 2048;
/** An application's name; a user's name. */
export const MAX_NAME_LENGTH = 500;
/** A file path (Linux PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;
/**
 * A message for people: why something failed or ended, an exception, a reason, the end of an
 * executor's stderr. Producers cut longer ones (see truncateMessage).
 */
export const MAX_MESSAGE_LENGTH = 8192;
/** A stack trace. */
export const MAX_STACK_LENGTH = 64 * 1024;
/** An application's failure (AppFailure): its message, and its stack (the first frames matter). */
export const MAX_FAILURE_MESSAGE_LENGTH = 4096;
export const MAX_FAILURE_STACK_LENGTH = 16 * 1024;
/** A line or column of a source file (the longest files people edit are far shorter). */
export const MAX_SOURCE_LINE = 10_000_000;
/** One argument of a command, or one environment value (Linux MAX_ARG_STRLEN). */
export const MAX_ARG_LENGTH = 128 * 1024;
/** Arguments of a command (Linux's 2 MiB ARG_MAX holds fewer of any useful length). */
export const MAX_ARGS = 4096;
/** Entries of a command's extra environment, of an application's conf, of log URLs. */
export const MAX_ENV_ENTRIES = 4096;
/** An environment variable's or a conf key's name. */
export const MAX_KEY_LENGTH = 256;
/** A ping's payload (benchmarks send up to a megabyte). */
export const MAX_PAYLOAD_LENGTH = 16 * 1024 * 1024;

// Numbers

/** The cores of one worker, executor or driver (the largest machines have a few thousand). */
export const MAX_WORKER_CORES = 100_000;
/** The memory of one worker, executor or driver in MiB: 2^30 MiB is 1 PiB. */
export const MAX_MEMORY_MB = 2 ** 30;
/** Workers one master takes: more registrations are refused (RegisterWorkerFailed). */
export const MAX_WORKERS = 100_000;
/** An application's cores across the cluster (wick.cores.max, cores granted). */
export const MAX_CLUSTER_CORES = MAX_WORKERS * MAX_WORKER_CORES;
/**
 * Executors one application has at once: the scheduler grants no more (an executor limit every
 * application has), so that one application's entry in the state stays a bounded size.
 */
export const MAX_APP_EXECUTORS = 100_000;
/** Applications and drivers active at once: more are refused. */
export const MAX_ACTIVE_APPS = 100_000;
export const MAX_ACTIVE_DRIVERS = 100_000;
/** Completed applications, and completed drivers, a master keeps (wick.deploy.retained*). */
export const MAX_RETAINED = 100_000;
/** An application's executors that ended, kept in its entry (the most recent). */
export const MAX_REMOVED_EXECUTORS = 1000;
/** States an executor's entry keeps (the most recent; an executor normally has three). */
export const MAX_EXECUTOR_HISTORY = 16;
/** Ids that count up (executors, tasks, jobs, sequence numbers): what a double holds exactly. */
export const MAX_COUNTER = Number.MAX_SAFE_INTEGER;
/** A time in ms since the epoch: the last one a JavaScript Date holds. */
const MAX_EPOCH_MS = 8_640_000_000_000_000;
/** An exit status, a pid: a 32-bit int. */
const MIN_INT32 = -(2 ** 31);
export const MAX_INT32 = 2 ** 31 - 1;

// Lists

/**
 * Entries of one page of the master's state (RequestMasterState with `limit`); a page also stops
 * at about MASTER_STATE_PAGE_BYTES.
 */
export const MAX_STATE_PAGE_ENTRIES = 10_000;
/** What the master puts in one page of its state, or one pushed event, at most (roughly). */
export const MASTER_STATE_PAGE_BYTES = 4 * 1024 * 1024;
/** Masters taking part in one ZooKeeper election. */
export const MAX_MASTERS = 100;

// Schemas built from them

/** A count or id that counts up from 0. */
export const Counter = (description?: string) =>
  Type.Integer({ minimum: 0, maximum: MAX_COUNTER, ...(description ? { description } : {}) });

export const EpochMs = Type.Integer({
  minimum: 0,
  maximum: MAX_EPOCH_MS,
  description: 'ms since the epoch',
});

export const Int32 = (description?: string) =>
  Type.Integer({ minimum: MIN_INT32, maximum: MAX_INT32, ...(description ? { description } : {}) });

export const Host = Type.String({ minLength: 1, maxLength: MAX_HOST_LENGTH });
export const Url = (description?: string) =>
  Type.String({ maxLength: MAX_URL_LENGTH, ...(description ? { description } : {}) });
export const Message = (description?: string) =>
  Type.String({ maxLength: MAX_MESSAGE_LENGTH, ...(description ? { description } : {}) });

/**
 * A map from names to values with at most `maxEntries` entries, each name matching `key` (a
 * pattern that bounds its length): a TypeBox Record's keys are otherwise any string.
 */
export function BoundedRecord<V extends TSchema>(
  key: string,
  value: V,
  maxEntries: number,
  description?: string,
) {
  return Type.Record(Type.String({ pattern: key }), value, {
    maxProperties: maxEntries,
    additionalProperties: false,
    ...(description ? { description } : {}),
  });
}

/** Any name of up to MAX_KEY_LENGTH characters, newlines included. */
export const KEY_PATTERN = `^[\\s\\S]{1,${MAX_KEY_LENGTH}}$`;

/** Cuts a message for people to what its field allows, saying that it did. */
export function truncateMessage(text: string, max = MAX_MESSAGE_LENGTH): string {
  if (text.length <= max) return text;
  // 40 characters hold the note whatever the count.
  const keep = Math.max(0, max - 40);
  return `${text.slice(0, keep)} … (${text.length - keep} characters cut)`;
}
