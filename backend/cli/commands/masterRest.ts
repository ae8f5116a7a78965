import { DaemonConf } from '../../conf/daemon.js';
import { RestConf } from '../../conf/rest.js';
import type { WickConf } from '../../conf/WickConf.js';
import { RestSubmissionServer } from '../../http/rest/RestSubmissionServer.js';
import { uiClusterSecret } from '../../http/uiAuth.js';
import type { RunningMaster } from '../../master/startMaster.js';
import { MASTER_ENDPOINT } from '../../protocol/endpoints.js';
import { RpcConf } from '../../rpc/index.js';
import { restDriverCreator } from './restDriver.js';

/**
 * The master's REST submission server, when wick.master.rest.enabled: bound where the master
 * binds, serving the master's certificate off loopback, and refused at start when the cluster
 * runs without authentication, because then it would have no credential to ask for and would be
 * Spark's open door (CVE-2018-11770).
 */
export async function startMasterRest(
  running: RunningMaster,
  conf: WickConf,
): Promise<RestSubmissionServer | undefined> {
  if (!conf.get(RestConf.enabled)) return undefined;
  const secret = uiClusterSecret(conf);
  if (secret === undefined) {
    throw new Error(
      'wick.master.rest.enabled=true needs authentication: the REST submission server answers only the cluster credential, and this master runs without one (wick.authenticate=false). Turn authentication on, or set wick.master.rest.enabled=false.',
    );
  }
  const master = running.env.endpointRef({ address: running.env.address, name: MASTER_ENDPOINT });
  return RestSubmissionServer.start({
    master,
    createDriver: restDriverCreator({ env: running.env, master, masterUrl: running.url }),
    secret,
    host: conf.get(DaemonConf.masterHost),
    port: conf.get(RestConf.port),
    maxRetries: conf.get(RpcConf.portMaxRetries),
    security: running.security,
  });
}
