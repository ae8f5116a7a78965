import { dirname } from 'node:path';
import type { DriverDescription } from '../protocol/common.js';
import { distFile } from '../util/paths.js';
import type { BundledApp } from './bundle.js';

/**
 * What RequestSubmitDriver carries for a Wick application in cluster deploy mode: a worker runs
 * `wick driver-wrapper` on the bundle, with the master, the settings and the app's folder in its
 * environment (`wick submit --deploy-mode cluster` and the VS Code agent both submit this).
 */
export function driverDescription(o: {
  bundled: BundledApp;
  args: readonly string[];
  masterUrl: string;
  conf: Record<string, string>;
  name?: string;
  memoryMB: number;
  cores: number;
  supervise: boolean;
}): DriverDescription {
  return {
    appPath: o.bundled.bundle,
    mem: o.memoryMB,
    cores: o.cores,
    supervise: o.supervise,
    command: {
      argv: [
        process.execPath,
        distFile('wick.cjs'),
        'driver-wrapper',
        '{{WORKER_URL}}',
        '{{USER_APP}}',
        ...o.args,
      ],
      env: {
        WICK_MASTER: o.masterUrl,
        WICK_SUBMIT_CONF: JSON.stringify(o.conf),
        WICK_APP_DIR: dirname(o.bundled.source),
        ...(o.name ? { WICK_APP_NAME: o.name } : {}),
      },
    },
  };
}
