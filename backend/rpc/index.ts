export { RpcConf } from '../conf/rpc.js';
export { RpcError, RpcErrorCode } from '../protocol/errors.js';
export { endpointURI, parseEndpointURI, RpcAddress } from './RpcAddress.js';
export {
  type RpcCallContext,
  RpcEndpoint,
  type RpcSenderContext,
  unsupported,
} from './RpcEndpoint.js';
export { type AskOptions, RpcEndpointRef } from './RpcEndpointRef.js';
export { RpcEnv, type RpcEnvOptions } from './RpcEnv.js';
