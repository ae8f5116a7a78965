export { RpcConf } from '../conf/rpc.js';
export { RpcError, RpcErrorCode } from '../protocol/errors.js';
export type { ConnectionStats } from './Connections.js';
export type { Credential, Principal } from './credentials.js';
export { endpointURI, parseEndpointURI, RpcAddress } from './RpcAddress.js';
export type { PeerConnection } from './RpcEndpoint.js';
export {
  type RpcCallContext,
  RpcEndpoint,
  type RpcSenderContext,
  unsupported,
} from './RpcEndpoint.js';
export { type AskOptions, RpcEndpointRef } from './RpcEndpointRef.js';
export { clusterRpcAuth, type RpcAuth, RpcEnv, type RpcEnvOptions } from './RpcEnv.js';
export { isClusterPeer, refuse } from './refusals.js';
