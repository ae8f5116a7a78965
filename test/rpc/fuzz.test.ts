/**
 * A live env in its own process takes 10,000 random and mutated frames over a few raw
 * connections (some past wick.hello, some not) and afterwards still answers a well-formed ask.
 * Every frame it sends back meanwhile must be a well-formed JSON-RPC response.
 *
 * Also a property test of the framing through a real socket: valid requests written in random
 * pieces come back as the matching replies, whatever the payload.
 *
 * The frames are fixed by a seed (WICK_FUZZ_SEED to replay another run).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { RpcEnv } from '../../backend/rpc/index.js';
import { Peer, RawClient, type RawFrame } from '../helpers/peer.js';
import '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';

/** Only against hangs (every wait here is on an event, never on a clock). */
const HANG_GUARD_MS = 60_000;

const SEED = Number(process.env.WICK_FUZZ_SEED ?? 0x5eed_2026);
const FRAMES = 10_000;
const MAX_SIZE = 64 * 1024;

let peer: Peer;

before(async () => {
  peer = await Peer.start(undefined, {
    name: 'fuzz-peer',
    endpoints: ['Echo', 'Other'],
    conf: { 'wick.rpc.message.maxSize': '64k' },
  });
});

after(async () => {
  await peer?.kill();
});

// ---------------------------------------------------------------------------------------------
// What to send

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Well-formed frames to start from; FROM is replaced by the connection's own address. */
const FROM = '@@FROM@@';
const templates: Json[] = [
  { jsonrpc: '2.0', id: 1, method: 'wick.hello', params: { version: 1, from: FROM } },
  {
    jsonrpc: '2.0',
    id: 2,
    method: 'Ping',
    params: { to: 'Echo', from: FROM, message: { type: 'Ping', seq: 3, payload: 'p' } },
  },
  {
    jsonrpc: '2.0',
    method: 'TestRecord',
    params: { to: 'Other', from: FROM, message: { type: 'TestRecord', value: 'v' } },
  },
  {
    jsonrpc: '2.0',
    id: 'check',
    method: 'CheckExistence',
    params: {
      to: 'endpoint-verifier',
      from: FROM,
      message: { type: 'CheckExistence', name: 'Echo' },
    },
  },
  {
    jsonrpc: '2.0',
    id: 4,
    method: 'TestFail',
    params: { to: 'Other', from: FROM, message: { type: 'TestFail', message: 'boom' } },
  },
  {
    jsonrpc: '2.0',
    id: 5,
    method: 'TestGetLog',
    params: { to: 'Echo', from: FROM, message: { type: 'TestGetLog' } },
  },
  {
    jsonrpc: '2.0',
    id: 6,
    method: 'TestUnhandled',
    params: { to: 'Echo', from: FROM, message: { type: 'TestUnhandled' } },
  },
  { jsonrpc: '2.0', id: 7, method: 'wick.auth', params: { proof: 'ab'.repeat(32) } },
  { jsonrpc: '2.0', id: 8, result: { type: 'Pong', seq: 1 } },
  { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'e', data: { x: 1 } } },
];

const deep = (n: number, open: string, inner: string, close: string) =>
  `${open.repeat(n)}${inner}${close.repeat(n)}`;

/** Values that tend to break things, spliced into templates as raw JSON text. */
const nastyText = fc.oneof(
  fc.constantFrom(
    '1e308',
    '-1e308',
    '1e400',
    '-0',
    '9007199254740993',
    '123456789012345678901234567890',
    '0.0000000000000000000000001',
    '"\\ud800"',
    '"\\u0000"',
    '"__proto__"',
    '{"__proto__":{"polluted":true}}',
    '"constructor"',
    '[]',
    '{}',
    'null',
    'true',
  ),
  fc.integer({ min: 1, max: 30_000 }).map((n) => deep(n, '[', '', ']')),
  fc.integer({ min: 1, max: 10_000 }).map((n) => deep(n, '{"a":', '1', '}')),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => JSON.stringify(s)),
  fc.integer({ min: 1, max: 3000 }).map((n) => JSON.stringify('\u{1F600}é\u2028'.repeat(n))),
);

const jsonValue = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

interface Mutation {
  pick: number;
  op: 'delete' | 'replace' | 'retype' | 'add';
  value: Json;
  key: string;
  raw: string;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom('delete', 'replace', 'retype', 'add'),
  value: jsonValue,
  key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('type', 'id', 'from', 'to')),
  raw: nastyText,
});

/** Every [container, key] in a JSON tree. */
function slots(value: Json, out: Array<[Json[] | { [k: string]: Json }, string | number]> = []) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([value, i]);
      slots(v, out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push([value, k]);
      slots(v, out);
    }
  }
  return out;
}

/** Applies mutations; a spliced raw value is left as a marker and substituted after stringify. */
function mutate(template: Json, mutations: Mutation[]): string {
  const root = structuredClone(template) as { [k: string]: Json };
  const raws: string[] = [];
  for (const m of mutations) {
    const all = slots(root);
    if (all.length === 0) break;
    const [container, key] = all[m.pick % all.length] as [{ [k: string]: Json }, string];
    switch (m.op) {
      case 'delete':
        if (Array.isArray(container)) container.splice(Number(key), 1);
        else delete container[key];
        break;
      case 'replace':
        container[key] = m.value;
        break;
      case 'retype':
        raws.push(m.raw);
        container[key] = `@@RAW${raws.length - 1}@@`;
        break;
      case 'add':
        if (Array.isArray(container)) container.push(m.value);
        else container[m.key] = m.value;
        break;
    }
  }
  return JSON.stringify(root).replace(
    /"@@RAW(\d+)@@"/g,
    (_, i: string) => raws[Number(i)] as string,
  );
}

/** One frame: the text to write (the newline, if any, included) and what kind it is. */
interface Frame {
  kind: string;
  bytes: Buffer;
}

const line = (kind: string) => (text: string | Buffer) => ({
  kind,
  bytes: Buffer.concat([Buffer.from(text), Buffer.from('\n')]),
});

const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(...templates).map((t) => line('valid')(JSON.stringify(t))),
  },
  {
    weight: 30,
    arbitrary: fc
      .tuple(fc.constantFrom(...templates), fc.array(mutation, { minLength: 1, maxLength: 3 }))
      .map(([t, ms]) => line('mutated')(mutate(t, ms))),
  },
  { weight: 8, arbitrary: jsonValue.map((v) => line('json')(JSON.stringify(v))) },
  {
    weight: 8,
    arbitrary: fc
      .uint8Array({ maxLength: 300 })
      .map((b) => ({ kind: 'bytes', bytes: Buffer.from(b) })),
  },
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map(line('unicode')) },
  { weight: 2, arbitrary: nastyText.map(line('nasty')) },
  {
    // A request whose line is cut short: it runs into whatever comes next.
    weight: 5,
    arbitrary: fc.tuple(fc.constantFrom(...templates), fc.nat()).map(([t, cut]) => {
      const b = Buffer.from(JSON.stringify(t));
      return { kind: 'partial', bytes: b.subarray(0, cut % b.length) };
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', ' ', '\r', '\t\t', '\u00a0').map(line('blank')),
  },
  {
    // Over wick.rpc.message.maxSize.
    weight: 1,
    arbitrary: fc
      .integer({ min: MAX_SIZE + 1, max: MAX_SIZE + 4096 })
      .map((n) =>
        line('oversize')(`{"jsonrpc":"2.0","id":1,"method":"Ping","params":"${'o'.repeat(n)}"}`),
      ),
  },
);

/** The codes the env may answer a bad frame (or a failing handler) with. */
const ALLOWED_CODES = new Set([
  -32700, -32600, -32601, -32602, -32000, -32001, -32002, -32004, -32005, -32006,
]);

// ---------------------------------------------------------------------------------------------

test('10,000 random and mutated frames, then a well-formed ask still answers', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const frames = fc.sample(frameArb, { seed: SEED, numRuns: FRAMES });
  assert.equal(frames.length, FRAMES);
  const kinds = new Map<string, number>();
  for (const f of frames) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);

  const codes = new Map<number, number>();
  const problems: string[] = [];
  const check = (f: RawFrame) => {
    if (f.unparsed !== undefined) problems.push(`not JSON: ${f.unparsed.slice(0, 200)}`);
    else if (f.jsonrpc !== '2.0')
      problems.push(`not JSON-RPC 2.0: ${JSON.stringify(f).slice(0, 200)}`);
    else if (f.error) {
      codes.set(f.error.code, (codes.get(f.error.code) ?? 0) + 1);
      if (!ALLOWED_CODES.has(f.error.code) || typeof f.error.message !== 'string') {
        problems.push(`unexpected error: ${JSON.stringify(f).slice(0, 300)}`);
      }
    } else if (!('result' in f) || !('id' in f)) {
      problems.push(`neither result nor error: ${JSON.stringify(f).slice(0, 200)}`);
    }
  };

  /** Connections 0 and 1 say hello first; 2 not (until a fuzzed hello does); 3 never does. */
  const lanes = [0, 1, 2, 3].map((i) => ({
    from: `client-fuzz-${i}`,
    hello: i < 2,
    raw: undefined as RawClient | undefined,
    opened: 0,
  }));
  let received = 0;
  const open = async (lane: (typeof lanes)[number]) => {
    if (lane.raw) received += lane.raw.received;
    const raw = await RawClient.connect(peer.address, t).catch((err: Error) => {
      throw new Error(
        `cannot reconnect (${err.message}); the peer's log ends:\n${peer.stderr.slice(-3000)}`,
      );
    });
    raw.discard = true;
    if (lane.hello) {
      raw.discard = false;
      await raw.hello(lane.from);
      raw.discard = true;
    }
    raw.onFrame = check;
    lane.raw = raw;
    lane.opened++;
    return raw;
  };
  for (const lane of lanes) await open(lane);

  // Each lane writes its share in batches, waiting for each write to be taken by the OS.
  const BATCH = 50;
  await Promise.all(
    lanes.map(async (lane, i) => {
      // The last lane stays before the handshake throughout: no hello reaches it.
      const mine = frames.filter(
        (f, j) => j % lanes.length === i && !(i === 3 && f.bytes.includes('wick.hello')),
      );
      for (let k = 0; k < mine.length; k += BATCH) {
        const chunk = Buffer.concat(
          mine
            .slice(k, k + BATCH)
            .map((f) =>
              Buffer.from(f.bytes.toString('latin1').replaceAll(FROM, lane.from), 'latin1'),
            ),
        );
        let raw = lane.raw as RawClient;
        // A frame such as a hello asking to authenticate makes the env hang up: reconnect.
        if (!raw.isOpen) raw = await open(lane);
        await raw.write(chunk).catch(() => undefined);
      }
    }),
  );

  // Every lane that is still open gets a well-formed ask through after the garbage.
  for (const lane of lanes) {
    let raw = lane.raw as RawClient;
    if (!raw.isOpen) raw = await open(lane);
    raw.discard = false;
    // End whatever partial line is pending, then say hello if this lane never has.
    await raw.write('\n');
    const h = await raw.call('wick.hello', { version: 1, from: lane.from });
    const from = h.result ? lane.from : undefined;
    if (from === undefined) {
      // Already open: under its first hello's name (possibly one a fuzzed frame chose).
      assert.match(h.error?.message ?? '', /already received/, JSON.stringify(h));
    }
    const r = await raw.call('Ping', {
      to: 'Echo',
      from: from ?? lane.from,
      message: { type: 'Ping', seq: 99, payload: 'after the storm' },
    });
    if (r.error) {
      // A fuzzed hello got in first under another name; the env said so precisely.
      assert.equal(r.error.code, -32602, JSON.stringify(r));
      assert.match(r.error.message, /"from"/);
    } else {
      assert.deepEqual(r.result, { type: 'Pong', seq: 99, payload: 'after the storm' });
    }
    received += raw.received;
  }

  assert.equal(peer.child.exitCode, null, `the peer died:\n${peer.stderr.slice(-3000)}`);
  assert.equal(peer.child.signalCode, null);
  assert.deepEqual(problems.slice(0, 20), []);

  // A new RpcEnv, on a new connection, gets a correct answer.
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'after-fuzz', clientMode: true });
  t.after(() => env.stop());
  const payload = 'ünï©ødé \u{1F600} "quoted" \\ back\nslash';
  const echo = env.endpointRef({ address: peer.address, name: 'Echo' });
  assert.deepEqual(await echo.ask({ type: 'Ping', seq: 424242, payload }), {
    type: 'Pong',
    seq: 424242,
    payload,
  });
  // Both endpoints' inboxes still move.
  const other = env.endpointRef({ address: peer.address, name: 'Other' });
  assert.deepEqual(await other.ask({ type: 'Ping', seq: 1 }), { type: 'Pong', seq: 1 });

  t.diagnostic(`seed ${SEED}; frames by kind ${JSON.stringify(Object.fromEntries(kinds))}`);
  t.diagnostic(`replies ${received}; error codes ${JSON.stringify(Object.fromEntries(codes))}`);
  t.diagnostic(`connections opened ${lanes.map((l) => l.opened).join('/')}`);
  t.diagnostic(`peer stderr: ${peer.stderr.split('\n').length} lines`);
});

// ---------------------------------------------------------------------------------------------

const payloadArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc.string({
    unit: fc.constantFrom(
      '\n',
      '\r',
      '\r\n',
      '\\',
      '"',
      '\u2028',
      '\u2029',
      '\u0000',
      'é',
      '😀',
      '\ud800',
      '\udc00',
      '{',
      '}',
    ),
    maxLength: 60,
  }),
  fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    maxLength: 100,
  }),
  fc.integer({ min: 1000, max: 20_000 }).map((n) => 'é😀x'.repeat(n / 4)),
);

test('framing: requests written in random pieces come back as Pongs with the same payload', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const raw = await RawClient.connect(peer.address, t);
  await raw.hello('client-framing');
  let seq = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(payloadArb, { minLength: 1, maxLength: 4 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.boolean(),
      fc.boolean(),
      async (payloads, cuts, crlf, blankLines) => {
        const sent = payloads.map((payload) => ({ id: ++seq, payload }));
        const text = sent
          .map(
            ({ id, payload }) =>
              `${blankLines ? '\n' : ''}${JSON.stringify({
                jsonrpc: '2.0',
                id,
                method: 'Ping',
                params: {
                  to: 'Echo',
                  from: 'client-framing',
                  message: { type: 'Ping', seq: id, payload },
                },
              })}${crlf ? '\r\n' : '\n'}`,
          )
          .join('');
        const bytes = Buffer.from(text);
        // Cut anywhere, including inside a multi-byte character.
        const at = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
        let from = 0;
        for (const [i, cut] of [...at, bytes.length].entries()) {
          if (cut <= from) continue;
          await raw.write(bytes.subarray(from, cut));
          from = cut;
          // Let the pieces go out (and be read) separately.
          await new Promise((r) => (i % 2 ? setImmediate(r) : setTimeout(r, 1)));
        }
        for (const { id, payload } of sent) {
          const r = await raw.take((f) => f.id === id);
          assert.deepEqual(r.result, { type: 'Pong', seq: id, payload });
        }
        assert.equal(raw.frames.length, 0, JSON.stringify(raw.frames).slice(0, 300));
      },
    ),
    { seed: SEED, numRuns: 150 },
  );
});
