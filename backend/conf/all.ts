/**
 * Loads every module that declares settings, so that the registry of keys is complete. As Spark
 * keeps its entries in one package (org.apache.spark.internal.config), every component's settings
 * are declared here in conf/, which imports nothing above util: a daemon, the driver library and
 * the CLI all know every key, and conf/ stays at the bottom of the layers.
 */
import './app.js';
import './daemon.js';
import './daemonLauncher.js';
import './deploy.js';
import './executorLogs.js';
import './resources.js';
import './history.js';
import './master.js';
import './rest.js';
import './reverseProxy.js';
import './rpc.js';
import './sandbox.js';
import './shuffle.js';
import './ssl.js';
import './submit.js';
import './worker.js';
