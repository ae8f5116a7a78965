import { rm } from 'node:fs/promises';
import { AppConf } from '../../conf/app.js';
import { SubmitConf } from '../../conf/submit.js';
import { WickConf } from '../../conf/WickConf.js';
import type { CreatedDriver } from '../../http/rest/RestSubmissionServer.js';
import type { CreateSubmission } from '../../http/rest/submitRestProtocol.js';
import { RequestSubmitDriver } from '../../protocol/client.js';
import type { RpcEndpointRef, RpcEnv } from '../../rpc/index.js';
import { bundleApp } from '../../submit/bundle.js';
import { driverDescription } from '../../submit/driverDescription.js';
import { uploadToMasters } from '../../submit/uploadApp.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('RestSubmissionServer');

/**
 * A REST CreateSubmissionRequest carried out in the master's process as `wick submit
 * --deploy-mode cluster` would carry it out: the application at appResource (a file on the
 * master's machine) compiled into its code tree, left with this master's file store, and a driver
 * asked for with the request's properties as the application's settings (Spark's names read as
 * Wick's), its arguments, and its environment variables beside Wick's own.
 */
export function restDriverCreator(o: {
  /** The master's own RpcEnv: the upload and the submission are asks within this process. */
  env: RpcEnv;
  master: RpcEndpointRef;
  /** wick://host:port of this master: where the files go, and the driver's master. */
  masterUrl: string;
}): (request: CreateSubmission) => Promise<CreatedDriver> {
  return async (request) => {
    const bundled = await bundleApp(request.appPath);
    try {
      const shipped = await uploadToMasters(o.env, o.masterUrl, bundled, [], (line) =>
        log.info(line),
      );
      const conf = new WickConf(request.sparkProperties);
      // Spark's REST server sets spark.master to its own master the same way.
      conf.set('wick.master', o.masterUrl);
      conf.set('wick.submit.deployMode', 'cluster');
      const settings = Object.fromEntries(conf.entries());
      delete settings['wick.files'];
      const desc = driverDescription({
        bundled,
        shipped,
        args: request.appArgs,
        masterUrl: o.masterUrl,
        conf: settings,
        name: conf.get(AppConf.appName) || undefined,
        memoryMB: conf.get(SubmitConf.driverMemory),
        cores: conf.get(SubmitConf.driverCores),
        supervise: conf.get(SubmitConf.driverSupervise),
      });
      desc.command.env = { ...request.environmentVariables, ...desc.command.env };
      const reply = await o.master.ask(RequestSubmitDriver({ driverDescription: desc }));
      return { success: reply.success, driverId: reply.driverId, message: reply.message };
    } finally {
      await rm(bundled.root, { recursive: true, force: true });
    }
  };
}
