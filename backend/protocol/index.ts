/** Loads every message definition, so the registry is complete wherever this is imported. */
import './rpc.js';
import './deploy.js';
import './app.js';
import './client.js';
import './state.js';
import './worker.js';
import './executor.js';
