import { ExecutorLogsConf } from '../../conf/executorLogs.js';
import type { WickConf } from '../../conf/WickConf.js';
import type { RollingConf } from './RollingFileAppender.js';

/** wick.executor.logs.rolling.* as the worker's runners use it; undefined when rolling is off. */
export function rollingConfOf(conf: WickConf): RollingConf | undefined {
  const kind = conf.get(ExecutorLogsConf.strategy);
  if (kind === '') return undefined;
  const strategy =
    kind === 'size'
      ? { kind: 'size' as const, maxBytes: conf.get(ExecutorLogsConf.maxSize) }
      : { kind: 'time' as const, ...conf.get(ExecutorLogsConf.timeInterval) };
  return {
    strategy,
    maxRetainedFiles: conf.get(ExecutorLogsConf.maxRetainedFiles),
    compress: conf.get(ExecutorLogsConf.enableCompression),
  };
}
