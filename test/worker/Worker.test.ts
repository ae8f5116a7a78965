/**
 * The Worker's handlers against its boundaries: every message of Wick's protocol that a worker
 * receives has a handler (replies aside: they answer an ask), and the Worker handles nothing else but the messages it sends itself.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import * as selfMessages from '../../backend/worker/messages.js';
import { Worker } from '../../backend/worker/Worker.js';

test('the Worker handles every message a worker receives, and its self-messages', () => {
  const worker = new Worker({
    conf: new WickConf({ 'wick.worker.executor.prestart': 'false' }),
    masterAddresses: [],
    cores: 1,
    memoryMB: 128,
    workDir: '/nonexistent',
    webUiPort: 0,
    webUiUrl: 'http://127.0.0.1:0',
    workerId: 'worker-test',
    localDirs: [],
  });
  const handled = worker
    .handledMessages()
    .map((d) => d.type)
    .sort();
  // A reply goes to the ask that is waiting for it, not to a handler.
  const replies = new Set(wickProtocol.all().flatMap((d) => (d.replies ?? []).map((r) => r.type)));
  const received = wickProtocol
    .all()
    .filter((d) => d.to.includes('worker') && !replies.has(d.type))
    .map((d) => d.type);
  const own: string[] = Object.values(selfMessages).map((d) => d.type);
  assert.ok(received.length > 10, `the catalogue lists what a worker receives: ${received}`);
  assert.deepEqual(handled, [...received, ...own].sort());
  for (const d of worker.handledMessages()) {
    if (own.includes(d.type)) assert.deepEqual(d.from, ['self'], `${d.type} only from itself`);
  }
});
