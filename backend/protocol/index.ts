/** Loads every message definition, so the registry is complete wherever this is imported. */
import './rpc.js';
