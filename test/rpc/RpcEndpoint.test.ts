/**
 * Typed handlers: an endpoint registers one handler per message definition; the inbox hands each
 * message to its handler, answers a request with what the handler returns, and refuses a message
 * that came the wrong way (a one-way message asked, a request sent one-way, a self-message from a
 * peer) or that no handler takes — each with an error that says what to do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineSelfMessage, type WireMessage } from '../../backend/protocol/registry.js';
import { RpcEndpoint, type RpcEndpointRef, RpcEnv, RpcErrorCode } from '../../backend/rpc/index.js';
import {
  TestBig,
  TestBlob,
  TestDone,
  TestGetLog,
  TestLog,
  TestRecord,
  TestSleep,
  TestUnhandled,
} from '../fixtures/testMessages.js';
import { waitFor } from '../helpers/processes.js';
import { testProtocol } from '../helpers/protocol.js';
import { rpcError } from '../helpers/rpcAsserts.js';

const Tick = defineSelfMessage('TestEndpointTick', 'A timer of the typed endpoint fired.', {});

class Typed extends RpcEndpoint {
  readonly seen: string[] = [];
  readonly errors: string[] = [];

  constructor() {
    super();
    this.on(TestRecord, (msg, sender) => {
      // msg.value is a string by the definition: no cast.
      this.seen.push(`${msg.value.toUpperCase()} from ${sender.senderAddress}`);
    });
    this.on(TestGetLog, () => TestLog({ entries: this.seen }));
    this.on(TestSleep, (msg, ctx) => {
      setTimeout(() => ctx.reply(TestDone({ tag: msg.tag ?? 'none' })), msg.ms);
      return undefined;
    });
    // A handler that breaks its definition's promise (the types forbid it; a cast here).
    this.on(TestBig, () => TestLog({ entries: [] }) as never);
    this.on(Tick, () => {
      this.seen.push('tick');
    });
  }

  override onError(err: Error): void {
    this.errors.push(err.message);
  }
}

async function pair(t: { after(fn: () => unknown): void }) {
  const server = await RpcEnv.create({ protocol: testProtocol, name: 'typed' });
  const client = await RpcEnv.create({ protocol: testProtocol, name: 'caller', clientMode: true });
  t.after(() => Promise.all([client.stop(), server.stop()]));
  const endpoint = new Typed();
  server.setupEndpoint('Typed', endpoint);
  const ref: RpcEndpointRef = await client.setupEndpointRef(server.address, 'Typed');
  return { server, client, endpoint, ref };
}

test('one-way messages reach their handler typed, and a request is answered with what it returns', async (t) => {
  const { client, ref } = await pair(t);
  ref.send(TestRecord({ value: 'a' }));
  ref.send(TestRecord({ value: 'b' }));
  const log = await ref.ask(TestGetLog({}));
  assert.deepEqual(log.entries, [`A from ${client.address}`, `B from ${client.address}`]);
});

test('a handler may answer later through its context', async (t) => {
  const { ref } = await pair(t);
  assert.deepEqual(await ref.ask(TestSleep({ ms: 5, tag: 'later' })), TestDone({ tag: 'later' }));
});

test('a one-way message sent as an ask is refused, saying to send it as a notification', async (t) => {
  const { ref } = await pair(t);
  await assert.rejects(
    ref.ask(TestRecord({ value: 'x' })),
    rpcError(
      RpcErrorCode.UnsupportedMessage,
      /^TestRecord is one-way: send it as a notification \(a JSON-RPC request without an id\)/,
    ),
  );
  // Nothing was recorded, and the endpoint still serves.
  assert.deepEqual((await ref.ask(TestGetLog({}))).entries, []);
});

test('a request sent one-way reaches no handler and onError says to ask it', async (t) => {
  const { ref, endpoint } = await pair(t);
  ref.send(TestSleep({ ms: 0 }));
  await waitFor('the refusal', () => endpoint.errors.length > 0);
  assert.match(
    endpoint.errors[0] as string,
    /^TestSleep is a request: send it as an ask .* answered with TestDone/,
  );
});

test('a message with no handler is refused as unsupported', async (t) => {
  const { client, ref } = await pair(t);
  await assert.rejects(
    ref.ask(TestUnhandled({})),
    rpcError(
      RpcErrorCode.UnsupportedMessage,
      new RegExp(`^Unsupported message TestUnhandled from ${client.address}$`),
    ),
  );
});

test('a reply of a type its request does not declare fails the ask', async (t) => {
  const { ref } = await pair(t);
  await assert.rejects(
    ref.ask(TestBig({ bytes: 1 })),
    rpcError(
      RpcErrorCode.InvalidReply,
      /^Expected TestBlob in reply to TestBig from .*, got TestLog$/,
    ),
  );
  assert.deepEqual(TestBig.replies, [TestBlob]);
});

test('a self-message is handled when the endpoint sends it, and no peer can send it', async (t) => {
  const { server, ref, endpoint } = await pair(t);
  const local = server.endpointRef({ address: server.address, name: 'Typed' });
  local.send(Tick({}));
  await waitFor('the tick', () => endpoint.seen.includes('tick'));
  await assert.rejects(
    ref.ask({ type: 'TestEndpointTick' } as WireMessage),
    rpcError(RpcErrorCode.MethodNotFound, /TestEndpointTick is not a Wick message type/),
  );
  assert.deepEqual((await ref.ask(TestGetLog({}))).entries, ['tick']);
});

test('a second handler for one message is refused at registration', () => {
  class Twice extends RpcEndpoint {
    constructor() {
      super();
      this.on(TestRecord, () => {});
      this.on(TestRecord, () => {});
    }
  }
  assert.throws(() => new Twice(), /Twice already has a handler for TestRecord/);
  assert.deepEqual(
    new Typed().handledMessages().map((d) => d.type),
    ['TestRecord', 'TestGetLog', 'TestSleep', 'TestBig', 'TestEndpointTick'],
  );
});
