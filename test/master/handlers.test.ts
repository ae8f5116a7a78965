/**
 * The master's handlers against its boundaries: every message the protocol sends a master has a
 * handler in one of its endpoints (the Master, its FileServer, and the LogRelay of the workers'
 * log messages), they handle nothing else but the Master's self-messages, and each handler takes
 * the message the way it
 * is sent (a request as an ask, the rest one-way).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { FileServer } from '../../backend/files/FileServer.js';
import { LogRelay } from '../../backend/master/logRelay/LogRelay.js';
import { Master } from '../../backend/master/Master.js';
import * as selfMessages from '../../backend/master/messages.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { isMessageDef } from '../../backend/protocol/registry.js';
import { messagesTo, selfMessagesOf } from '../helpers/boundaries.js';

const master = new Master({ conf: new WickConf(), webUiPort: 0, webUiUrl: 'http://127.0.0.1:0' });
// The master's RpcEnv serves the files of cluster-mode applications from an endpoint of its own.
const handled = [...master.handledMessages(), ...new FileServer().handledMessages()];
const relay = new LogRelay({ locate: () => assert.fail('not asked'), maxFollowsPerClient: 1 });
const relayed = relay.handledMessages();

test('the master handles every message its boundaries send it, and its self-messages', () => {
  const toMaster = messagesTo('master');
  const own = selfMessagesOf(selfMessages);
  assert.ok(toMaster.includes('Heartbeat') && toMaster.includes('RequestSubmitDriver'));
  assert.deepEqual(
    [...handled, ...relayed].map((d) => d.type).sort(),
    [...toMaster, ...own].sort(),
  );
});

test("the LogRelay takes the workers' log messages, as a worker does, and the Master none of them", () => {
  assert.deepEqual(relayed.map((d) => d.type).sort(), [
    'FollowLog',
    'LogChunk',
    'LogFollowEnded',
    'RequestLogRange',
    'StopFollowLog',
  ]);
  const masterTypes = new Set(handled.map((d) => d.type));
  for (const d of relayed) assert.ok(!masterTypes.has(d.type), d.type);
});

test('its self-messages come from itself only and are in no catalogue', () => {
  for (const def of Object.values(selfMessages).filter(isMessageDef)) {
    assert.deepEqual(def.from, ['self'], def.type);
    assert.equal(wickProtocol.get(def.type), undefined, def.type);
  }
});

test('the requests it answers, as asks, are these; it takes everything else one-way', () => {
  const requests = handled.filter((d) => d.replies !== undefined).map((d) => d.type);
  assert.deepEqual(requests.sort(), [
    'BoundPortsRequest',
    'CreateToken',
    'DecommissionWorkersOnHosts',
    'FetchFileChunk',
    'ListTokens',
    'ReportListenerEvents',
    'RequestAppStatusApi',
    'RequestDriverStatus',
    'RequestKillApplication',
    'RequestKillDriver',
    'RequestMasterState',
    'RequestMissingFiles',
    'RequestSubmissionKey',
    'RequestSubmitDriver',
    'RevokeToken',
    'SubscribeMasterState',
    'UploadFileChunk',
  ]);
});
