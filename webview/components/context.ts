import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { DataSource } from '../data/DataSource.js';
import type { Capabilities, DashboardConfig } from '../protocol.js';

/** What every view may need besides its own data: the source for actions, and the clock. */
export interface DashboardContext {
  source: DataSource | undefined;
  capabilities: Capabilities;
  config: DashboardConfig;
  /** The display clock, ms since the epoch (durations of running things, the chart's window). */
  now: number;
  /** Says something in the page's polite live region (screen readers read it out). */
  announce(message: string): void;
}

export const DashboardCtx = createContext<DashboardContext>({
  source: undefined,
  capabilities: { killEnabled: false },
  config: { mode: 'master', host: 'web' },
  now: 0,
  announce: () => {},
});

export const useDashboard = (): DashboardContext => useContext(DashboardCtx);
