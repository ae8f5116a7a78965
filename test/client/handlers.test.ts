/**
 * Every message the protocol sends to a client, or from the master to an application's client,
 * has a handler in the cluster client's endpoints: none falls through to "Unsupported message".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppClient } from '../../backend/app/driver/AppClient.js';
import { LogFollower } from '../../backend/client/LogFollower.js';
import { MasterStateMirror } from '../../backend/client/MasterStateMirror.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { appDescription } from '../helpers/masterMocks.js';

const handled = (...endpoints: { handledMessages(): { type: string }[] }[]) =>
  new Set(endpoints.flatMap((e) => e.handledMessages().map((d) => d.type)));

test('every message to a client is handled by the state mirror or the log follower', () => {
  const types = handled(new MasterStateMirror(), new LogFollower());
  const toClient = wickProtocol.all().filter((d) => d.to.includes('client'));
  assert.ok(toClient.length > 0);
  for (const d of toClient) assert.ok(types.has(d.type), `no client handles ${d.type}`);
});

test("every message from the master to an application is handled by the driver's AppClient", () => {
  const listener = {
    connected: () => {},
    executorAdded: () => {},
    executorRemoved: () => {},
    dead: () => {},
  };
  const types = handled(new AppClient([], appDescription(), listener));
  const toApp = wickProtocol
    .all()
    .filter((d) => d.to.includes('driver') && d.from.includes('master'));
  assert.ok(toApp.length > 0);
  for (const d of toApp) assert.ok(types.has(d.type), `AppClient does not handle ${d.type}`);
});
