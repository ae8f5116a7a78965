/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { clusterTotals } from '../../backend/shared/utilization.js';
import { formatMiB } from '../format.js';
import type { MasterState, UtilizationSample } from '../protocol.js';
import { Section, StateBadge } from './common.js';
import { useDashboard } from './context.js';
import { AppsTable, DriversTable, WorkersTable } from './tables.js';
import { UtilizationChart } from './UtilizationChart.js';

/** The cluster at a glance, as the top of Spark's master page. */
export function ClusterSummary({ state }: { state: MasterState }) {
  const t = clusterTotals(state);
  const items: [string, ComponentChildren][] = [
    ['Status', <StateBadge key="status" state={state.status} />],
    ['Alive Workers', `${t.aliveWorkers}`],
    ['Cores in use', `${t.coresUsed} Used of ${t.cores} Total`],
    ['Memory in use', `${formatMiB(t.memoryUsed)} Used of ${formatMiB(t.memory)} Total`],
    ['Applications', `${state.activeApps.length} Running, ${state.completedApps.length} Completed`],
    [
      'Drivers',
      `${state.activeDrivers.length} Running, ${state.completedDrivers.length} Completed`,
    ],
  ];
  // With standby masters (recovery mode ZOOKEEPER): every master and its state, the leader first.
  if (state.masters?.length)
    items.push([
      'Masters',
      <ul class="masters" key="masters" aria-label="Masters">
        {state.masters.map((m) => (
          <li key={m.url}>
            {m.url} <StateBadge state={m.status} />
          </li>
        ))}
      </ul>,
    ]);
  return (
    <dl class="summary" aria-label="Cluster summary">
      {items.map(([k, v]) => (
        <div class="summary-item" key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function WorkersSection({ state }: { state: MasterState }) {
  return (
    <Section id="workers" title="Workers" count={state.workers.length}>
      <WorkersTable workers={state.workers} />
    </Section>
  );
}

export function AppsSections({ state }: { state: MasterState }) {
  const running = state.activeApps.filter((a) => a.state !== 'WAITING');
  const waiting = state.activeApps.filter((a) => a.state === 'WAITING');
  return (
    <>
      <Section id="running-apps" title="Running Applications" count={running.length}>
        <AppsTable
          apps={running}
          caption="Running applications"
          empty="No application is running."
        />
      </Section>
      <Section id="waiting-apps" title="Waiting Applications" count={waiting.length}>
        <AppsTable
          apps={waiting}
          caption="Waiting applications"
          empty="No application is waiting for resources."
        />
      </Section>
      <Section
        id="completed-apps"
        title="Completed Applications"
        count={state.completedApps.length}
      >
        <AppsTable
          apps={[...state.completedApps].reverse()}
          caption="Completed applications"
          empty="No application has completed."
          completed
        />
      </Section>
    </>
  );
}

export function DriversSections({ state }: { state: MasterState }) {
  return (
    <>
      <Section id="running-drivers" title="Running Drivers" count={state.activeDrivers.length}>
        <DriversTable
          drivers={state.activeDrivers}
          caption="Running drivers"
          empty="No driver is running."
        />
      </Section>
      <Section
        id="completed-drivers"
        title="Completed Drivers"
        count={state.completedDrivers.length}
      >
        <DriversTable
          drivers={[...state.completedDrivers].reverse()}
          caption="Completed drivers"
          empty="No driver has completed."
          completed
        />
      </Section>
    </>
  );
}

export function Overview({
  state,
  utilization,
}: {
  state: MasterState;
  utilization: UtilizationSample[];
}) {
  const { now } = useDashboard();
  return (
    <>
      <ClusterSummary state={state} />
      <Section id="utilization" title="Cores and memory in use">
        <UtilizationChart samples={utilization} now={now} />
      </Section>
      <WorkersSection state={state} />
      <AppsSections state={state} />
      <DriversSections state={state} />
    </>
  );
}
