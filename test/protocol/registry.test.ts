import assert from 'node:assert/strict';
import { test } from 'node:test';
import { wickProtocol } from '../../backend/protocol/index.js';
import {
  boundary,
  defineMessage,
  defineSelfMessage,
  MessageCatalog,
  Type,
  validateMessage,
} from '../../backend/protocol/registry.js';
import { CheckExistence, Ping, Pong } from '../../backend/protocol/rpc.js';
import * as testMessages from '../fixtures/testMessages.js';
import { TestDone, TestGetLog, TestLog, TestSleep } from '../fixtures/testMessages.js';

/**
 * Message definitions and catalogues. A name may be defined once per process, so these tests use
 * the existing test fixtures rather than defining messages of their own, but for a few names of
 * their own (TestCatalog…).
 */
const catalog = wickProtocol.with(testMessages);

test('a message definition builds messages with their type filled in', () => {
  assert.deepEqual(TestSleep({ ms: 5 }), { type: 'TestSleep', ms: 5 });
  assert.deepEqual(TestSleep({ ms: 0, tag: 't' }), { type: 'TestSleep', ms: 0, tag: 't' });
  assert.deepEqual(TestGetLog({}), { type: 'TestGetLog' });
  assert.equal(Object.keys(Ping({ seq: 1 }))[0], 'type', 'type comes first on the wire');
  assert.equal(JSON.stringify(Ping({ seq: 1 })), '{"type":"Ping","seq":1}');
});

test('fields spread from another message do not carry its type over', () => {
  const ping = Ping({ seq: 3, payload: 'p' });
  const pong = Pong({ ...ping });
  assert.equal(pong.type, 'Pong');
  assert.deepEqual(pong, { type: 'Pong', seq: 3, payload: 'p' });
  assert.equal(validateMessage(Pong, pong), undefined);
});

test('a definition carries its name, doc, boundary and a closed schema, and is in the catalogue', () => {
  assert.equal(TestSleep.type, 'TestSleep');
  assert.equal(TestSleep.boundary, 'Tests');
  assert.match(TestSleep.doc, /TestDone/);
  const schema = TestSleep.schema as unknown as Record<string, unknown>;
  assert.equal(schema.$id, 'TestSleep');
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.required, ['type', 'ms']);
  assert.strictEqual(catalog.get('TestSleep'), TestSleep);
  assert.strictEqual(catalog.get('CheckExistence'), CheckExistence);
  assert.equal(catalog.get('NoSuchMessage'), undefined);
  assert.equal(wickProtocol.get('TestSleep'), undefined, "Wick's protocol has no test messages");
  const names = catalog.all().map((d) => d.type);
  for (const n of ['Ping', 'Pong', 'CheckExistence', 'TestSleep', 'TestLog']) {
    assert.ok(names.includes(n), n);
  }
  assert.equal(new Set(names).size, names.length, 'each name once');
});

test('defining a name twice is refused and the first definition stays', () => {
  assert.throws(
    () => defineMessage('Elsewhere', 'TestSleep', 'A second TestSleep.', { other: Type.String() }),
    /Message type TestSleep is defined twice/,
  );
  assert.throws(() => defineMessage('Elsewhere', 'Ping', 'Again.', {}), /Ping is defined twice/);
  assert.strictEqual(catalog.get('TestSleep'), TestSleep);
  assert.equal(validateMessage(TestSleep, { type: 'TestSleep', ms: 1 }), undefined);
});

test('a request names its replies; a one-way message and a self-message have none', () => {
  assert.deepEqual(TestSleep.replies, [TestDone]);
  assert.equal(TestDone.replies, undefined);
  assert.deepEqual(
    CheckExistence.replies?.map((d) => d.type),
    ['CheckExistenceResponse'],
  );
  const TestCatalogTick = defineSelfMessage('TestCatalogTick', 'A timer fired.');
  assert.equal(TestCatalogTick.replies, undefined);
  assert.deepEqual(TestCatalogTick.from, ['self']);
  assert.equal(catalog.get('TestCatalogTick'), undefined, 'no catalogue has a self-message');
});

test('a boundary gives its messages their senders and receivers; a message may override them', () => {
  const b = boundary('Tests → Elsewhere', ['worker', 'client'], 'master');
  const Plain = defineMessage(b, 'TestCatalogPlain', 'Plain.', {});
  const Pushed = defineMessage(
    b,
    'TestCatalogPushed',
    'Pushed back.',
    {},
    {
      from: 'master',
      to: 'client',
    },
  );
  assert.deepEqual(
    [Plain.boundary, Plain.from, Plain.to],
    ['Tests → Elsewhere', ['worker', 'client'], ['master']],
  );
  assert.deepEqual([Pushed.from, Pushed.to], [['master'], ['client']]);
});

test('a catalogue refuses two definitions of one name, and takes the same one twice', () => {
  const one = new MessageCatalog(TestSleep, testMessages);
  assert.strictEqual(one.get('TestSleep'), TestSleep);
  const impostor = Object.assign(() => ({}), { ...TestSleep, schema: TestSleep.schema });
  assert.throws(() => one.with(impostor), /TestSleep is in the catalogue twice/);
});

test('validateMessage accepts a valid message, optional fields left out or not', () => {
  assert.equal(validateMessage(TestSleep, TestSleep({ ms: 10 })), undefined);
  assert.equal(validateMessage(TestSleep, TestSleep({ ms: 10, tag: 'a' })), undefined);
  assert.equal(validateMessage(TestLog, TestLog({ entries: [] })), undefined);
});

/** Checks a refusal names the message type, the field, the value and the expectation. */
function assertRefusal(problem: string | undefined, parts: (string | RegExp)[]): void {
  assert.ok(problem, 'refused');
  for (const p of parts) {
    if (typeof p === 'string') assert.ok(problem.includes(p), `"${problem}" has ${p}`);
    else assert.match(problem, p);
  }
}

test('validateMessage names the field, the value and what was expected', () => {
  assertRefusal(validateMessage(TestSleep, { type: 'TestSleep', ms: 'soon' }), [
    'TestSleep',
    'field /ms',
    'expected integer',
    'got "soon"',
  ]);
  assertRefusal(validateMessage(TestSleep, { type: 'TestSleep', ms: -1 }), [
    'field /ms',
    /greater or equal to 0/,
    'got -1',
  ]);
  assertRefusal(validateMessage(TestSleep, { type: 'TestSleep', ms: 1.5 }), [
    'field /ms',
    'integer',
    'got 1.5',
  ]);
  assert.equal(
    validateMessage(TestSleep, { type: 'TestSleep' }),
    'TestSleep: field /ms is required but missing',
  );
  assertRefusal(validateMessage(TestLog, { type: 'TestLog', entries: ['a', 3] }), [
    'field /entries/1',
    'expected string',
    'got 3',
  ]);
});

test('validateMessage refuses fields the schema does not declare', () => {
  assertRefusal(validateMessage(TestSleep, { type: 'TestSleep', ms: 1, extra: true }), [
    'field /extra',
    /unexpected property/,
    'got true',
  ]);
});

test('validateMessage refuses a message of another type and values that are not objects', () => {
  assertRefusal(validateMessage(TestSleep, { type: 'Ping', ms: 1 }), [
    'field /type',
    "'TestSleep'",
    'got "Ping"',
  ]);
  for (const [value, shown] of [
    [42, 'got 42'],
    [null, 'got null'],
    ['TestSleep', 'got "TestSleep"'],
    [[], 'got []'],
  ] as const) {
    assertRefusal(validateMessage(TestSleep, value), ['the message', 'expected object', shown]);
  }
});

test('validateMessage shortens a long value', () => {
  const problem = validateMessage(TestSleep, { type: 'TestSleep', ms: 'x'.repeat(500) });
  assert.ok(problem);
  assert.ok(problem.endsWith('…'), problem);
  assert.ok(problem.length < 250, `${problem.length} characters`);
});

test('precompile compiles the validators of the boundaries asked for, and only those', () => {
  const boundaries = new Set(wickProtocol.all().map((d) => d.boundary));
  assert.ok(boundaries.has('Driver → Executor'), [...boundaries].join(', '));
  const d2e = wickProtocol.all().filter((d) => d.boundary === 'Driver → Executor').length;
  assert.equal(
    wickProtocol.precompile((b) => b === 'Driver → Executor'),
    d2e,
  );
  assert.equal(
    wickProtocol.precompile(() => false),
    0,
  );
  // Compiled or not, validation is the same.
  assert.equal(validateMessage(Ping, Ping({ seq: 1 })), undefined);
});
