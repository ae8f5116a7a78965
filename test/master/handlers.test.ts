/**
 * The Master's handlers against its boundaries: every message the protocol sends a master has a
 * handler, it handles nothing else but its own self-messages, and each handler takes the message
 * the way it is sent (a request as an ask, the rest one-way).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { Master } from '../../backend/master/Master.js';
import * as selfMessages from '../../backend/master/messages.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { isMessageDef } from '../../backend/protocol/registry.js';
import { messagesTo, selfMessagesOf } from '../helpers/boundaries.js';

const master = new Master({ conf: new WickConf(), webUiPort: 0, webUiUrl: 'http://127.0.0.1:0' });
const handled = master.handledMessages();

test('the master handles every message its boundaries send it, and its self-messages', () => {
  const toMaster = messagesTo('master');
  const own = selfMessagesOf(selfMessages);
  assert.ok(toMaster.includes('Heartbeat') && toMaster.includes('RequestSubmitDriver'));
  assert.deepEqual(handled.map((d) => d.type).sort(), [...toMaster, ...own].sort());
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
    'RequestDriverStatus',
    'RequestKillApplication',
    'RequestKillDriver',
    'RequestMasterState',
    'RequestSubmitDriver',
    'SubscribeMasterState',
  ]);
});
