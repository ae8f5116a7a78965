import { ListenerEventsReported, ReportListenerEvents } from '../../protocol/app.js';
import { RpcError, RpcErrorCode } from '../../protocol/errors.js';
import { reportListenerEvents } from '../operations/appStatus.js';
import { checkFromDriver } from '../senders.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/** Applications' drivers → Master: their jobs, stages and tasks (ReportListenerEvents). */
export function appStatusHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(ReportListenerEvents, (msg, sender) => {
    // A driver's last report may follow its UnregisterApplication: a completed one counts too.
    const app = m.cluster.appById(msg.appId) ?? m.cluster.completedAppById(msg.appId);
    if (!app) {
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        `ReportListenerEvents of ${msg.appId}: no such application at this master`,
      );
    }
    checkFromDriver(app, sender, `ReportListenerEvents of ${msg.appId}`);
    reportListenerEvents(m.ops, app, msg);
    return ListenerEventsReported({});
  });
}
