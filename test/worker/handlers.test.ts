/**
 * The Worker's handlers against its boundaries: every message the protocol sends a worker has a
 * handler, it handles nothing else but its own self-messages, and each handler takes the message
 * the way it is sent (a request as an ask, the rest one-way). The worker's shuffle service, an
 * endpoint of its own on its own RpcEnv, handles the shuffle's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { isMessageDef } from '../../backend/protocol/registry.js';
import { ShuffleBlockServer } from '../../backend/shuffle/ShuffleBlockServer.js';
import * as selfMessages from '../../backend/worker/messages.js';
import { serviceDirResolver } from '../../backend/worker/shuffleService.js';
import { Worker } from '../../backend/worker/Worker.js';
import { messagesTo, selfMessagesOf } from '../helpers/boundaries.js';

const worker = new Worker({
  conf: new WickConf({ 'wick.worker.executor.prestart': 'false' }),
  masterAddresses: ['127.0.0.1:1'],
  cores: 1,
  memoryMB: 512,
  workDir: '/nonexistent/work',
  webUiPort: 0,
  webUiUrl: 'http://127.0.0.1:0',
  workerId: 'worker-20261201000000-127.0.0.1-1',
  localDirs: [],
});
const handled = worker.handledMessages();
const service = new ShuffleBlockServer(serviceDirResolver({ existing: () => [] }));
const serviceHandles = new Set(service.handledMessages().map((d) => d.type));

test('the worker handles every message its boundaries send it, and its self-messages', () => {
  const toWorker = messagesTo('worker').filter((t) => !serviceHandles.has(t));
  assert.deepEqual([...serviceHandles], ['FetchShuffleBlock'], "the shuffle service's");
  assert.ok(messagesTo('worker').includes('FetchShuffleBlock'));
  const own = selfMessagesOf(selfMessages);
  assert.ok(toWorker.includes('LaunchExecutor') && toWorker.includes('FollowLog'));
  assert.ok(toWorker.includes('MasterChanged'), 'MasterChanged goes to workers and drivers');
  assert.deepEqual(handled.map((d) => d.type).sort(), [...toWorker, ...own].sort());
});

test('its self-messages come from itself only and are in no catalogue', () => {
  for (const def of Object.values(selfMessages).filter(isMessageDef)) {
    assert.deepEqual(def.from, ['self'], def.type);
    assert.equal(wickProtocol.get(def.type), undefined, def.type);
  }
});

test('the requests it answers, as asks, are these; it takes everything else one-way', () => {
  const requests = handled.filter((d) => d.replies !== undefined).map((d) => d.type);
  assert.deepEqual(requests.sort(), ['FollowLog', 'RequestLogRange', 'RequestWorkerState']);
});
