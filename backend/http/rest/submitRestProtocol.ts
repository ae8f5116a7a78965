// Every key known, so that a property is checked (or called unknown) as any process would.
import '../../conf/all.js';
import { ConfigError, WickConf } from '../../conf/WickConf.js';
import { MAX_KEY_LENGTH, MAX_PATH_LENGTH } from '../../protocol/bounds.js';
import { version } from '../../util/version.js';

/**
 * Spark's REST submission protocol (deploy/rest/SubmitRestProtocol*.scala), as JSON: the requests
 * a Spark client (RestSubmissionClient, or curl) sends and the responses it reads, with Spark's
 * field names, `action` naming the message, and an ErrorResponse for anything refused. Pure: the
 * server (RestSubmissionServer.ts) reads the body and asks the master; this checks and shapes.
 * Unlike Spark's Jackson mapping, every field has a bound, and a refusal names the field.
 */

export const PROTOCOL_VERSION = 'v1';

/** Spark's status for a request naming an unknown protocol version. */
export const SC_UNKNOWN_PROTOCOL_VERSION = 468;

/** The most bytes of a request body; a CreateSubmissionRequest is a few KiB. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export const LIMITS = {
  clientSparkVersion: 100,
  mainClass: 500,
  appArgs: 1000,
  appArg: 64 * 1024,
  sparkProperties: 1000,
  propertyValue: 64 * 1024,
  environmentVariables: 256,
  environmentValue: 64 * 1024,
  message: 8192,
  /** Unknown fields named back to the client (Spark's unknownFields). */
  unknownFields: 100,
} as const;

/** A CreateSubmissionRequest that passed every check. */
export interface CreateSubmission {
  clientSparkVersion: string;
  /** As given: an absolute path or a file: URL (what the master reads is `appPath`). */
  appResource: string;
  /** The application's entry file on the master's disk. */
  appPath: string;
  mainClass?: string;
  appArgs: string[];
  /** The properties as given (Spark's names or Wick's), every known one valid. */
  sparkProperties: Record<string, string>;
  environmentVariables: Record<string, string>;
  /** Properties that Wick does not know, as given: told back, and ignored as submit ignores them. */
  unknownProperties: string[];
  /** Top-level fields of the request that Spark's protocol does not have (Spark's unknownFields). */
  unknownFields: string[];
}

/** A request refused: the message of the ErrorResponse (it names the field). */
export class SubmitRestProtocolError extends Error {}

const KNOWN_FIELDS = new Set([
  'action',
  'message',
  'clientSparkVersion',
  'appResource',
  'mainClass',
  'appArgs',
  'sparkProperties',
  'environmentVariables',
]);

/** An environment variable's name (a portable one), which Wick's own variables may not be. */
const ENV_NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${MAX_KEY_LENGTH - 1}}$`);

/**
 * Parses a CreateSubmissionRequest's body, checking what Spark's CreateSubmissionRequest.validate
 * checks (the action, clientSparkVersion, appResource, sparkProperties with spark.app.name, and
 * each property's type) and every bound. Throws SubmitRestProtocolError naming the field.
 */
export function parseCreateSubmission(body: string): CreateSubmission {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    throw new SubmitRestProtocolError(`Malformed request: not JSON (${(err as Error).message}).`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new SubmitRestProtocolError('Malformed request: expected a JSON object.');
  }
  const o = json as Record<string, unknown>;
  const action = o.action;
  if (action === undefined || action === null) {
    throw new SubmitRestProtocolError("Malformed request: field 'action' is missing.");
  }
  if (action !== 'CreateSubmissionRequest') {
    throw new SubmitRestProtocolError(
      `Malformed request: field 'action' must be "CreateSubmissionRequest" here, got ${quote(action)}.`,
    );
  }
  optionalString(o, 'message', LIMITS.message);
  const clientSparkVersion = requiredString(o, 'clientSparkVersion', LIMITS.clientSparkVersion);
  const appResource = requiredString(o, 'appResource', MAX_PATH_LENGTH);
  const mainClass = optionalString(o, 'mainClass', LIMITS.mainClass);
  const appArgs = stringArray(o, 'appArgs', LIMITS.appArgs, LIMITS.appArg);
  const sparkProperties = stringMap(
    o,
    'sparkProperties',
    LIMITS.sparkProperties,
    (k) =>
      k.length >= 1 && k.length <= MAX_KEY_LENGTH ? undefined : `1 to ${MAX_KEY_LENGTH} characters`,
    LIMITS.propertyValue,
  );
  if (sparkProperties === undefined) {
    throw new SubmitRestProtocolError(
      "Malformed request: field 'sparkProperties' is missing (an object of settings, with at least spark.app.name).",
    );
  }
  const environmentVariables =
    stringMap(
      o,
      'environmentVariables',
      LIMITS.environmentVariables,
      (k) =>
        !ENV_NAME.test(k)
          ? 'a name of letters, digits and _ not starting with a digit'
          : k.startsWith('WICK_')
            ? "not one of Wick's own (WICK_*): the worker sets those for the driver"
            : undefined,
      LIMITS.environmentValue,
    ) ?? {};
  const unknownProperties = checkProperties(sparkProperties);
  const unknownFields = Object.keys(o)
    .filter((k) => !KNOWN_FIELDS.has(k))
    .slice(0, LIMITS.unknownFields)
    .map((k) => k.slice(0, MAX_KEY_LENGTH));
  return {
    clientSparkVersion,
    appResource,
    appPath: appPathOf(appResource),
    ...(mainClass !== undefined ? { mainClass } : {}),
    appArgs: appArgs ?? [],
    sparkProperties,
    environmentVariables,
    unknownProperties,
    unknownFields,
  };
}

/**
 * The application file the master reads: an absolute path, or a file: URL (Spark's usual
 * spelling). Other schemes (hdfs:, http:) name a store Wick does not fetch from.
 */
function appPathOf(appResource: string): string {
  if (appResource.startsWith('/')) return appResource;
  if (/^file:/i.test(appResource)) {
    let url: URL;
    try {
      url = new URL(appResource);
    } catch {
      throw new SubmitRestProtocolError(
        `Malformed request: field 'appResource' is not a valid file: URL: ${quote(appResource)}.`,
      );
    }
    if (url.host !== '' && url.host !== 'localhost') {
      throw new SubmitRestProtocolError(
        `Malformed request: field 'appResource' names another host (${url.host}): give a path on the master's machine, file:///path or /path.`,
      );
    }
    return decodeURIComponent(url.pathname);
  }
  throw new SubmitRestProtocolError(
    `Malformed request: field 'appResource' must be an absolute path or a file: URL of the application (.js, .mjs or .ts) on the master's machine, got ${quote(appResource)}.`,
  );
}

/**
 * Each property checked as the submit's settings are (Spark's assertPropertyIs*, for every key
 * Wick knows rather than five), named as the client gave it; the unknown ones returned.
 */
function checkProperties(props: Record<string, string>): string[] {
  const name = props['spark.app.name'] ?? props['wick.app.name'];
  if (name === undefined || name.trim() === '') {
    throw new SubmitRestProtocolError(
      "Malformed request: property 'spark.app.name' is missing from sparkProperties.",
    );
  }
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(props)) {
    const conf = new WickConf().set(key, value);
    try {
      conf.validate();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      throw new SubmitRestProtocolError(
        `Malformed request: property '${key}' in sparkProperties: ${err.reason} (got ${quote(value)}).`,
      );
    }
    if (conf.unknownKeys().length > 0) unknown.push(key);
  }
  const deployMode = new WickConf(props).getRaw('wick.submit.deployMode');
  if (deployMode !== undefined && deployMode.trim() !== 'cluster') {
    throw new SubmitRestProtocolError(
      `Malformed request: property 'spark.submit.deployMode' must be "cluster" (the REST server creates cluster-mode drivers), got ${quote(deployMode)}.`,
    );
  }
  return unknown;
}

function requiredString(o: Record<string, unknown>, field: string, max: number): string {
  const v = optionalString(o, field, max);
  if (v === undefined || v === '') {
    throw new SubmitRestProtocolError(`Malformed request: field '${field}' is missing.`);
  }
  return v;
}

function optionalString(
  o: Record<string, unknown>,
  field: string,
  max: number,
): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  return checkedString(v, field, max);
}

/** `v` if it is a string of at most `max` characters; else the error naming `name`. */
function checkedString(v: unknown, name: string, max: number): string {
  if (typeof v !== 'string') {
    throw new SubmitRestProtocolError(
      `Malformed request: field '${name}' must be a string, got ${typeName(v)}.`,
    );
  }
  if (v.length > max) {
    throw new SubmitRestProtocolError(
      `Malformed request: field '${name}' is ${v.length} characters long, more than the ${max} allowed.`,
    );
  }
  return v;
}

function stringArray(
  o: Record<string, unknown>,
  field: string,
  maxItems: number,
  maxLength: number,
): string[] | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    throw new SubmitRestProtocolError(
      `Malformed request: field '${field}' must be an array of strings, got ${typeName(v)}.`,
    );
  }
  if (v.length > maxItems) {
    throw new SubmitRestProtocolError(
      `Malformed request: field '${field}' has ${v.length} items, more than the ${maxItems} allowed.`,
    );
  }
  return v.map((item, i) => checkedString(item, `${field}[${i}]`, maxLength));
}

function stringMap(
  o: Record<string, unknown>,
  field: string,
  maxEntries: number,
  keyProblem: (key: string) => string | undefined,
  maxValue: number,
): Record<string, string> | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw new SubmitRestProtocolError(
      `Malformed request: field '${field}' must be an object of strings, got ${typeName(v)}.`,
    );
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > maxEntries) {
    throw new SubmitRestProtocolError(
      `Malformed request: field '${field}' has ${entries.length} entries, more than the ${maxEntries} allowed.`,
    );
  }
  const out: Record<string, string> = Object.create(null);
  for (const [key, value] of entries) {
    const problem = keyProblem(key);
    if (problem !== undefined) {
      throw new SubmitRestProtocolError(
        `Malformed request: key ${quote(key.slice(0, MAX_KEY_LENGTH))} of field '${field}' must be ${problem}.`,
      );
    }
    out[key] = checkedString(value, `${field}.${key}`, maxValue);
  }
  return { ...out };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

/** A value shown in a message: JSON, cut to a readable length. */
function quote(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

// Responses, each with Spark's fields in Spark's (alphabetical) order and without nulls, as
// Jackson writes them (JsonInclude.NON_NULL, JsonPropertyOrder(alphabetic = true)).

type Json = Record<string, unknown>;

function response(action: string, fields: Json): Json {
  const all: Json = { action, serverSparkVersion: version, ...fields };
  const out: Json = {};
  for (const key of Object.keys(all).sort()) {
    if (all[key] !== undefined && all[key] !== null) out[key] = all[key];
  }
  return out;
}

export function errorResponse(message: string, highestProtocolVersion?: string): Json {
  return response('ErrorResponse', { message, highestProtocolVersion });
}

export function createSubmissionResponse(r: {
  success: boolean;
  message: string;
  submissionId?: string;
  unknownFields?: string[];
}): Json {
  return response('CreateSubmissionResponse', {
    success: r.success,
    message: r.message,
    submissionId: r.submissionId,
    unknownFields: r.unknownFields && r.unknownFields.length > 0 ? r.unknownFields : undefined,
  });
}

export function killSubmissionResponse(r: {
  submissionId: string;
  success: boolean;
  message: string;
}): Json {
  return response('KillSubmissionResponse', r);
}

export function submissionStatusResponse(r: {
  submissionId: string;
  success: boolean;
  driverState?: string;
  workerId?: string;
  workerHostPort?: string;
  message?: string;
}): Json {
  return response('SubmissionStatusResponse', r);
}
