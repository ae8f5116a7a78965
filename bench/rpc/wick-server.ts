/**
 * The server process of the rpc benchmark: an RpcEnv on loopback with an Echo endpoint that
 * answers Ping with Pong. Prints {"address"} when ready; exits on SIGTERM or when stdin closes.
 */

import { wickProtocol } from '../../backend/protocol/index.js';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { RpcEndpoint, RpcEnv } from '../../backend/rpc/index.js';
import { exitWithParent } from '../lib/process.js';

export const ECHO = 'Echo';

class Echo extends RpcEndpoint {
  constructor() {
    super();
    this.on(Ping, ({ seq }) => Pong({ seq }));
  }
}

const env = await RpcEnv.create({
  protocol: wickProtocol,
  name: 'benchServer',
  host: '127.0.0.1',
  port: 0,
});
env.setupEndpoint(ECHO, new Echo());
exitWithParent(() => env.stop());
process.stdout.write(`${JSON.stringify({ address: env.address })}\n`);
