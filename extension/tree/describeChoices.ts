/**
 * What Describe offers when it was not handed an item. A row's menu hands its command the row's
 * element only while the view still holds it: an application that ends between the right-click
 * and the click moves to the Completed group, collapsed, and VS Code's tree forgets its element,
 * so the command gets nothing (issue 29: "Describe fails when the app changes state under it").
 * Rather than an error, the items to choose from, the one whose state changed last first: that
 * is the application the user was looking at. Pure (no vscode): unit-tested.
 */
import type { MasterState } from '../../backend/agent/protocol.js';
import type { DescribeTarget } from './describe.js';

export interface DescribeChoice {
  label: string;
  description: string;
  target: DescribeTarget;
}

/** At most this many applications and drivers each: a long-lived cluster keeps many. */
export const MAX_CHOICES_PER_KIND = 50;

export function describeChoices(s: MasterState | undefined): DescribeChoice[] {
  if (!s) return [];
  const changed = (a: { startTime: number; endTime?: number }) => a.endTime ?? a.startTime;
  const apps = [...s.activeApps, ...s.completedApps]
    .sort((a, b) => changed(b) - changed(a))
    .slice(0, MAX_CHOICES_PER_KIND)
    .map(
      (a): DescribeChoice => ({
        label: a.name,
        description: `${a.state} · ${a.id}`,
        target: { kind: 'app', id: a.id },
      }),
    );
  const drivers = [...s.activeDrivers, ...s.completedDrivers]
    .sort((a, b) => b.submitDate - a.submitDate)
    .slice(0, MAX_CHOICES_PER_KIND)
    .map(
      (d): DescribeChoice => ({
        label: d.id,
        description: `${d.state} · driver`,
        target: { kind: 'driver', id: d.id },
      }),
    );
  const workers = s.workers.map(
    (w): DescribeChoice => ({
      label: `${w.host}:${w.port}`,
      description: `${w.state} · ${w.id}`,
      target: { kind: 'worker', id: w.id },
    }),
  );
  const master: DescribeChoice = {
    label: s.url,
    description: `${s.status} · master`,
    target: { kind: 'master' },
  };
  return [...apps, ...drivers, ...workers, master];
}
