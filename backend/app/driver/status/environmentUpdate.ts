import type { WickConf } from '../../../conf/WickConf.js';
import { MAX_MESSAGE_LENGTH, truncateMessage } from '../../../protocol/bounds.js';
import {
  MAX_ENVIRONMENT_ENTRIES,
  type WickListenerEnvironmentUpdate,
} from '../../../protocol/listener.js';
import { version } from '../../../util/version.js';

/**
 * Values of keys that look like secrets are not reported (Spark's spark.redaction.regex default,
 * `(?i)secret|password|token|access[.]?key`): the event goes to logs and to the master's UI.
 */
const SECRET_KEY = /secret|password|token|access[.]?key/i;
const REDACTED = '*********(redacted)';

/** The application's settings and runtime (Spark's SparkListenerEnvironmentUpdate). */
export function environmentUpdate(conf: WickConf): WickListenerEnvironmentUpdate {
  const props = conf
    .entries()
    .filter(([k]) => k.length > 0 && k.length <= 256)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, MAX_ENVIRONMENT_ENTRIES)
    .map(([key, v]) => ({
      key,
      value: SECRET_KEY.test(key) ? REDACTED : truncateMessage(v, MAX_MESSAGE_LENGTH),
    }));
  return {
    event: 'WickListenerEnvironmentUpdate',
    runtime: {
      nodeVersion: process.version.slice(0, 100),
      platform: `${process.platform} ${process.arch}`.slice(0, 100),
      wickVersion: version.slice(0, 100),
    },
    wickProperties: props,
  };
}
