/**
 * Every message an application's endpoints receive has a handler (CONVENTIONS item 12): the
 * driver's for Executor → Driver, the executor backend's for Driver → Executor; replies are
 * answers to asks, not handled by an endpoint.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { CoarseGrainedExecutorBackend } from '../../backend/app/executor/CoarseGrainedExecutorBackend.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import type { RpcEndpoint } from '../../backend/rpc/index.js';

import '../../backend/conf/all.js';

const replies = new Set(wickProtocol.all().flatMap((d) => (d.replies ?? []).map((r) => r.type)));

function received(boundary: string): string[] {
  return wickProtocol
    .all()
    .filter((d) => d.boundary === boundary && !replies.has(d.type))
    .map((d) => d.type)
    .sort();
}

function handled(endpoint: RpcEndpoint): string[] {
  return endpoint
    .handledMessages()
    .filter((d) => !d.from.includes('self'))
    .map((d) => d.type)
    .sort();
}

test('the driver endpoint handles every Executor → Driver message', () => {
  const driver = new DriverEndpoint(new WickConf(), '/apps/here', 3);
  assert.deepEqual(handled(driver), received('Executor → Driver'));
});

test('the executor backend handles every Driver → Executor message', () => {
  const backend = new CoarseGrainedExecutorBackend({
    driverUrl: 'wick://127.0.0.1:1/CoarseGrainedScheduler',
    executorId: '0',
    hostname: '127.0.0.1',
    cores: 1,
    appId: 'app-20260101000000-0000',
    exit: () => {},
  });
  assert.deepEqual(handled(backend), received('Driver → Executor'));
});
