/** Which connections a worker takes its master's messages from (pure logic; the hostile-peer suite tries them on real daemons). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LaunchDriver, MasterChanged, RegisteredWorker } from '../../backend/protocol/deploy.js';
import type { Principal } from '../../backend/rpc/credentials.js';
import type { PeerConnection } from '../../backend/rpc/index.js';
import { masterMessageProblem } from '../../backend/worker/fromMaster.js';
import type { MasterConnection } from '../../backend/worker/MasterConnection.js';

const MASTERS = ['m1:7077', 'm2:7077'];
const conn = (
  peer: string,
  direction: 'inbound' | 'outbound',
  principal: Principal = { kind: 'cluster' },
): PeerConnection => ({ peer, direction, principal, isOpen: true });
const following = (address: string | undefined, connected = true) =>
  ({ activeMasterAddress: address, connected }) as unknown as MasterConnection;
const launch = LaunchDriver({
  driverId: 'driver-1',
  driverDesc: {} as never,
});
const problem = (
  def: Parameters<typeof masterMessageProblem>[0],
  message: object,
  c: PeerConnection | undefined,
  m: MasterConnection,
) =>
  masterMessageProblem(
    def,
    message as never,
    { senderAddress: c?.peer ?? 'self', connection: c },
    m,
    MASTERS,
  );

test('a launch counts only over the connection the worker dialled to the master it follows', () => {
  assert.equal(
    problem(LaunchDriver, launch, conn('m1:7077', 'outbound'), following('m1:7077')),
    undefined,
  );
  assert.match(
    problem(LaunchDriver, launch, conn('m1:7077', 'inbound'), following('m1:7077')) ?? '',
    /a connection the sender opened/,
  );
  assert.match(
    problem(LaunchDriver, launch, conn('m2:7077', 'outbound'), following('m1:7077')) ?? '',
    /came from m2:7077, and this worker follows m1:7077/,
  );
  assert.equal(problem(LaunchDriver, launch, undefined, following(undefined)), undefined);
});

test('registration replies come from any master it dialled, before it follows one', () => {
  const reply = RegisteredWorker({
    master: { address: 'm2:7077', name: 'Master' },
    masterWebUiUrl: '',
    masterAddress: 'm2:7077',
  });
  assert.equal(
    problem(RegisteredWorker, reply, conn('m2:7077', 'outbound'), following(undefined)),
    undefined,
  );
  assert.match(
    problem(RegisteredWorker, reply, conn('m2:7077', 'inbound'), following(undefined)) ?? '',
    /opened/,
  );
});

test('MasterChanged must name a configured master and prove the cluster secret (open: only once the master is lost)', () => {
  const to = (address: string) =>
    MasterChanged({ master: { address, name: 'Master' }, masterWebUiUrl: '' });
  const open: Principal = { kind: 'open' };
  assert.equal(
    problem(MasterChanged, to('m2:7077'), conn('m2:7077', 'inbound'), following('m1:7077')),
    undefined,
  );
  assert.match(
    problem(MasterChanged, to('evil:1'), conn('evil:1', 'inbound'), following('m1:7077')) ?? '',
    /names evil:1, which is not one of this worker's masters/,
  );
  assert.match(
    problem(
      MasterChanged,
      to('m2:7077'),
      conn('x', 'inbound', { kind: 'app', id: 'a' }),
      following('m1:7077'),
    ) ?? '',
    /proved app, not the cluster secret/,
  );
  assert.match(
    problem(
      MasterChanged,
      to('m2:7077'),
      conn('m2:7077', 'inbound', open),
      following('m1:7077', true),
    ) ?? '',
    /only once the current master is lost/,
  );
  assert.equal(
    problem(
      MasterChanged,
      to('m2:7077'),
      conn('m2:7077', 'inbound', open),
      following('m1:7077', false),
    ),
    undefined,
  );
});
