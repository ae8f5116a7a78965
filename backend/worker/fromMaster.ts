import { MasterChanged } from '../protocol/deploy.js';
import type { AnyMessageDef, WireMessage } from '../protocol/registry.js';
import type { RpcSenderContext } from '../rpc/index.js';
import type { MasterConnection } from './MasterConnection.js';

/**
 * Who may tell a worker what to run (docs/protocol.md, "Who may do what"). The master's messages
 * count only over a connection this worker dialled — it dials nothing but its configured masters,
 * and with authentication on the far end proved the cluster secret — and, once registered, only
 * from the master it follows: a peer that connects to the worker gets no Launch* or Kill* in,
 * whatever address or masterUrl it announces.
 */
export function masterMessageProblem(
  def: AnyMessageDef,
  message: WireMessage,
  sender: RpcSenderContext,
  connection: MasterConnection,
  configuredMasters: readonly string[],
): string | undefined {
  const c = sender.connection;
  if (c === undefined) return undefined;
  if (def === MasterChanged)
    return masterChangedProblem(message, sender, connection, configuredMasters);
  if (c.direction !== 'outbound') {
    return 'it came over a connection the sender opened; the master is reached over the connection this worker dials to it';
  }
  if (!registrationReply(def) && connection.activeMasterAddress !== c.peer) {
    return `it came from ${c.peer}, and this worker follows ${connection.activeMasterAddress ?? 'no master yet'}`;
  }
  return undefined;
}

/** What a worker hears before it follows a master: any master it dialled may answer. */
function registrationReply(def: AnyMessageDef): boolean {
  return (
    def.type === 'RegisteredWorker' ||
    def.type === 'RegisterWorkerFailed' ||
    def.type === 'MasterInStandby' ||
    def.type === 'ReconnectWorker'
  );
}

/**
 * A new leader announces itself over a connection it opens. It must name a configured master
 * (the worker then dials that one itself) and prove the cluster secret; a cluster running open
 * cannot prove anything, so there it is believed only while the worker has lost its master.
 */
function masterChangedProblem(
  message: WireMessage,
  sender: RpcSenderContext,
  connection: MasterConnection,
  configuredMasters: readonly string[],
): string | undefined {
  const c = sender.connection;
  if (c === undefined) return undefined;
  const named = (message.master as { address?: string } | undefined)?.address ?? '';
  if (!configuredMasters.includes(named)) {
    return `it names ${named}, which is not one of this worker's masters (${configuredMasters.join(', ')})`;
  }
  if (c.principal.kind === 'cluster') return undefined;
  if (c.principal.kind === 'open' && !connection.connected) return undefined;
  return c.principal.kind === 'open'
    ? 'this cluster runs open, so a master change is believed only once the current master is lost'
    : `the sender proved ${c.principal.kind}, not the cluster secret`;
}
