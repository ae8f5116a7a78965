import type { ReportListenerEvents } from '../../protocol/app.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { ApplicationInfo } from '../ApplicationInfo.js';
import type { OperationsContext } from './context.js';

/**
 * A driver's report of its listener events: applied to its application's store (whole, or
 * refused whole naming the bound it passes), and the application's progress in brief announced to
 * the subscribers — once per report, never per task.
 */
export function reportListenerEvents(
  ops: OperationsContext,
  app: ApplicationInfo,
  { events, coalesced }: MessageOf<typeof ReportListenerEvents>,
): void {
  const progress = ops.appStatus.apply(app, events, coalesced ?? [], ops.clock.now());
  ops.cluster.setAppProgress(app, progress);
}
