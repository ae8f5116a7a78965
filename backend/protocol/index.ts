import * as app from './app.js';
import * as client from './client.js';
import * as deploy from './deploy.js';
import * as executor from './executor.js';
import * as files from './files.js';
import { MessageCatalog } from './registry.js';
import * as rpc from './rpc.js';
import * as shuffle from './shuffle.js';
import * as state from './state.js';
import * as tokens from './tokens.js';
import * as worker from './worker.js';

/**
 * Every message of Wick's protocol: what the daemons, drivers, executors and clients give their
 * RpcEnv to accept from peers, and the source of docs/protocol/.
 */
export const wickProtocol = new MessageCatalog(
  rpc,
  deploy,
  app,
  client,
  state,
  worker,
  executor,
  files,
  shuffle,
  tokens,
);

/** The RPC layer's own messages (the endpoint verifier, Ping): every RpcEnv accepts them. */
export const rpcMessages = new MessageCatalog(rpc);
