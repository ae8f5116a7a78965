import { basename } from 'node:path';
import { APP_NAME_ENV, SUBMIT_CONF_ENV } from '../protocol/childEnv.js';
import type { DriverDescription } from '../protocol/common.js';
import type { FileRef } from '../protocol/files.js';
import { withoutSecrets } from '../rpc/clusterSecret.js';
import type { BundledApp } from './bundle.js';

/**
 * What RequestSubmitDriver carries for a Wick application in cluster deploy mode: a worker fetches
 * the application's code tree from its master (`shipped`) and runs `wick driver-wrapper` on its
 * entry, with the master and the settings in its environment (`wick submit --deploy-mode cluster`
 * and the VS Code agent both submit this).
 */
export function driverDescription(o: {
  bundled: BundledApp;
  /** The manifest uploadToMasters left with the masters. */
  shipped: FileRef;
  args: readonly string[];
  masterUrl: string;
  conf: Record<string, string>;
  name?: string;
  memoryMB: number;
  cores: number;
  supervise: boolean;
}): DriverDescription {
  return {
    appPath: basename(o.bundled.source),
    shipped: o.shipped,
    mem: o.memoryMB,
    cores: o.cores,
    supervise: o.supervise,
    command: {
      argv: [
        '{{WICK_NODE}}',
        '{{WICK_CLI}}',
        'driver-wrapper',
        '{{WORKER_URL}}',
        '{{USER_APP}}',
        ...o.args,
      ],
      env: {
        WICK_MASTER: o.masterUrl,
        [SUBMIT_CONF_ENV]: JSON.stringify(withoutSecrets(o.conf)),
        ...(o.name ? { [APP_NAME_ENV]: o.name } : {}),
      },
    },
  };
}
