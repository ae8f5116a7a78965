/** Loads every module that declares settings, so that the registry of keys is complete. */
import '../rpc/config.js';
import '../master/config.js';
import '../worker/config.js';
import './daemon.js';
import './deploy.js';
