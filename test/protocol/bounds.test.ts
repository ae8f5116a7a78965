/**
 * Every field of the protocol has a bound: a string its maxLength, a number both a minimum and a
 * maximum, an array its maxItems, a map its maxProperties and a key pattern. This walks every
 * message a peer can send (and the wire structures of the handshake and envelope, and what the
 * web UI and the dashboard panel receive), so that a field added without a bound fails here. The
 * allow-list names the few fields bounded another way, each with why.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MAX_ID_LENGTH, MAX_WORKER_CORES, MAX_WORKERS } from '../../backend/protocol/bounds.js';
import { RegisterWorker } from '../../backend/protocol/deploy.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { validateMessage } from '../../backend/protocol/registry.js';
import { AuthParams, Envelope, HelloParams, HelloResult } from '../../backend/protocol/rpc.js';
import { KillTarget, LogSource, PanelToExtension } from '../../webview/protocol.js';

/** Fields bounded by something other than their schema, by path, with the reason. */
const ALLOWED: [RegExp, string][] = [
  [
    /^Envelope\/message$/,
    'the message itself: validated again, as its own type, against its own schema',
  ],
  [
    /^LaunchTask\/task\/.*\/(fn|seqOp|createCombiner|mergeValue|mergeCombiners)\/env$/,
    "an application's own values for its functions (any JSON): bounded by wick.rpc.message.maxSize, and only its driver may send them",
  ],
  [
    /^LaunchTask\/task\/source\|(4\/parts\[\]\/source\|)?0\/data(\[\])?$/,
    "a partition's elements (any JSON; a coalesced partition's part's too): bounded by wick.rpc.message.maxSize, from its driver only",
  ],
  [/^LaunchTask\/task\/action\|4\/zero$/, "an aggregate's zero value (any JSON): as the env above"],
  [
    /^LaunchTask\/task\/(source\|3|source\|4\/parts\[\]\/source\|3|action\|6)\/aggregator\/zero$/,
    "a shuffle aggregator's zero value (foldByKey, aggregateByKey; any JSON): as the env above",
  ],
  [
    /^LaunchTask\/task\/action\|6\/partitioner\|1\/bounds\[\]$/,
    "a range partitioner's bounds (keys: any JSON; at most MAX_SHUFFLE_PARTITIONS of them): as the env above",
  ],
  [
    /^StatusUpdate\/result$/,
    "a task's result (any JSON): bounded by wick.rpc.message.maxSize, from the executor that ran the task only",
  ],
];

const allowed = (path: string) => ALLOWED.some(([re]) => re.test(path));

interface Finding {
  path: string;
  problem: string;
}

function walk(schema: TSchema, path: string, out: Finding[]): void {
  const s = schema as Record<string, unknown>;
  const here = (problem: string) => {
    if (!allowed(path)) out.push({ path, problem });
  };
  if (s.const !== undefined) return;
  if (Array.isArray(s.anyOf)) {
    for (const [i, option] of (s.anyOf as TSchema[]).entries()) walk(option, `${path}|${i}`, out);
    return;
  }
  switch (s.type) {
    case 'string':
      if (typeof s.maxLength !== 'number') here('a string without maxLength');
      return;
    case 'integer':
    case 'number':
      if (typeof s.minimum !== 'number' && typeof s.exclusiveMinimum !== 'number')
        here('a number without a minimum');
      if (typeof s.maximum !== 'number' && typeof s.exclusiveMaximum !== 'number')
        here('a number without a maximum');
      return;
    case 'boolean':
    case 'null':
      return;
    case 'array':
      if (typeof s.maxItems !== 'number') here('an array without maxItems');
      walk(s.items as TSchema, `${path}[]`, out);
      return;
    case 'object': {
      if (s.patternProperties) {
        if (typeof s.maxProperties !== 'number') here('a map without maxProperties');
        if (s.additionalProperties !== false) here('a map whose keys are not checked');
        for (const [key, value] of Object.entries(s.patternProperties as Record<string, TSchema>)) {
          if (key === '^(.*)$' || !/\{\d+,\d+\}\$$/.test(key))
            here(`a map whose key pattern ${key} does not bound its length`);
          walk(value, `${path}{}`, out);
        }
        return;
      }
      if (s.additionalProperties !== false) here('an object open to any field');
      for (const [field, value] of Object.entries((s.properties ?? {}) as Record<string, TSchema>))
        walk(value, `${path}/${field}`, out);
      return;
    }
    default:
      here('a value of any type');
  }
}

function findings(): Finding[] {
  const out: Finding[] = [];
  for (const def of wickProtocol.all()) walk(def.schema, def.type, out);
  for (const [name, schema] of Object.entries({
    HelloParams,
    HelloResult,
    AuthParams,
    Envelope,
    KillTarget,
    LogSource,
    PanelToExtension,
  }))
    walk(schema, name, out);
  return out;
}

test('every field of every message has a bound (or a reason in the allow-list)', () => {
  const missing = findings();
  assert.deepEqual(
    missing.map((f) => `${f.path}: ${f.problem}`),
    [],
    'Give these fields a bound from backend/protocol/bounds.ts',
  );
});

test('the walk finds a field without a bound: it cannot pass by finding nothing', () => {
  const out: Finding[] = [];
  walk(
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        s: { type: 'string' },
        n: { type: 'integer', minimum: 0 },
        a: { type: 'array', maxItems: 1, items: { type: 'string', maxLength: 1 } },
        b: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 1 } },
        r: { type: 'object', patternProperties: { '^(.*)$': { type: 'string', maxLength: 1 } } },
        u: {},
      },
    } as unknown as TSchema,
    'X',
    out,
  );
  assert.deepEqual(
    out.map((f) => `${f.path}: ${f.problem}`),
    [
      'X/s: a string without maxLength',
      'X/n: a number without a maximum',
      'X/b: an array without maxItems',
      'X/r: a map without maxProperties',
      'X/r: a map whose keys are not checked',
      'X/r: a map whose key pattern ^(.*)$ does not bound its length',
      'X/u: a value of any type',
    ],
  );
});

test('a RegisterWorker outside the bounds is refused naming the field and the bound', () => {
  const ok = {
    type: 'RegisterWorker',
    id: 'worker-20000101000000-127.0.0.1-9',
    host: '127.0.0.1',
    port: 9,
    worker: { address: '127.0.0.1:9', name: 'Worker' },
    cores: MAX_WORKER_CORES,
    memory: 1024,
    workerWebUiUrl: 'http://127.0.0.1:10',
    masterAddress: '127.0.0.1:7077',
  };
  assert.equal(validateMessage(RegisterWorker, ok), undefined);
  assert.match(
    validateMessage(RegisterWorker, { ...ok, cores: 1e9 }) ?? '',
    new RegExp(
      `RegisterWorker: field /cores expected integer to be less or equal to ${MAX_WORKER_CORES}, got 1000000000`,
    ),
  );
  assert.match(
    validateMessage(RegisterWorker, { ...ok, cores: 0 }) ?? '',
    /field \/cores expected integer to be greater or equal to 1, got 0/,
  );
  const longId = 'w'.repeat(MAX_ID_LENGTH + 1);
  const tooLong = validateMessage(RegisterWorker, { ...ok, id: longId }) ?? '';
  assert.match(
    tooLong,
    new RegExp(`field /id expected string length less or equal to ${MAX_ID_LENGTH}`),
  );
  assert.ok(tooLong.length < 400, 'the value is cut in the error, not quoted whole');
  assert.match(
    validateMessage(RegisterWorker, { ...ok, host: 'h'.repeat(20_000) }) ?? '',
    /field \/host expected string length less or equal to 253/,
  );
  assert.ok(MAX_WORKERS > 0);
});

test('a map with too many entries, or a key too long, is refused naming it', () => {
  const def = wickProtocol.get('RegisterApplication');
  assert.ok(def);
  const app = (env: Record<string, string>) => ({
    type: 'RegisterApplication',
    appDescription: {
      name: 'x',
      user: 'u',
      memoryPerExecutorMB: 512,
      command: { argv: ['node'], env },
    },
    driver: { address: '127.0.0.1:9', name: 'AppClient' },
  });
  assert.equal(validateMessage(def, app({ A: '1' })), undefined);
  const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`V${i}`, '']));
  assert.match(
    validateMessage(def, app(many)) ?? '',
    /field \/appDescription\/command\/env expected object to have no more than 4096 properties/,
  );
  const badKey = validateMessage(def, app({ ['K'.repeat(10_000)]: '1' })) ?? '';
  assert.match(badKey, /field \/appDescription\/command\/env has a key .* not matching/);
  assert.ok(badKey.length < 600, `the key is cut in the error: ${badKey.length} chars`);
});

test('the bounds test compiles every schema it walks (no schema TypeBox cannot check)', () => {
  for (const schema of [HelloParams, HelloResult, AuthParams, Envelope, KillTarget, LogSource])
    TypeCompiler.Compile(schema);
});
