import { parseInteger } from './parse.js';
import { conf, define } from './WickConf.js';

/**
 * The master's REST submission server (Spark's spark.master.rest.*, read under those names too):
 * `/v1/submissions/create|kill|status` for cluster-mode drivers (docs/rest.md). Off by default, as
 * in Spark 3; unlike Spark's, it answers nothing without the cluster's credential.
 */
export const RestConf = {
  enabled: conf.bool(
    'wick.master.rest.enabled',
    false,
    "Serve Spark's REST submission API (/v1/submissions/create, /kill/<id>, /status/<id>) on wick.master.rest.port, at the master's bind address; every request must carry the cluster credential (Authorization: Bearer …). Needs authentication on: the server never runs open.",
  ),
  port: define(
    'wick.master.rest.port',
    '6066',
    "The REST submission server's port (Spark's 6066; 0: any free port).",
    (raw) => parseInteger(raw, 0, 65535),
  ),
};
