/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { formatBytes, formatDuration } from '../format.js';
import type { ExecutorData } from '../status/sparkJson.js';
import { LogLinks, StateBadge, Table } from './common.js';

/** Spark's executors page: what each executor ran, from /api/v1's allexecutors. */
export function SparkExecutorsTable({
  appId,
  executors,
}: {
  appId: string;
  executors: ExecutorData[];
}) {
  return (
    <Table
      caption="Executors' tasks"
      headers={[
        'Executor ID',
        'Address',
        'Status',
        'Cores',
        'Active Tasks',
        'Failed Tasks',
        'Complete Tasks',
        'Total Tasks',
        'Task Time',
        'Shuffle Read',
        'Shuffle Write',
        'Logs',
      ]}
      empty="No executor has registered with the driver."
      rows={executors.map((e) => (
        <tr key={e.id} data-executor={e.id}>
          <td class="num">{e.id}</td>
          <td>{e.hostPort}</td>
          <td>
            <StateBadge state={e.isActive ? 'Active' : 'Dead'} />
          </td>
          <td class="num">{e.totalCores}</td>
          <td class="num">{e.activeTasks}</td>
          <td class="num">{e.failedTasks}</td>
          <td class="num">{e.completedTasks}</td>
          <td class="num">{e.totalTasks}</td>
          <td class="num">{formatDuration(e.totalDuration)}</td>
          <td class="num">{formatBytes(e.totalShuffleRead)}</td>
          <td class="num">{formatBytes(e.totalShuffleWrite)}</td>
          <td>
            {/^\d+$/.test(e.id) ? (
              <LogLinks source={{ appId, executorId: Number(e.id) }} label={`executor ${e.id}`} />
            ) : (
              ''
            )}
          </td>
        </tr>
      ))}
    />
  );
}
