/**
 * A mock executor for tests of the driver (as Spark's tests use a MockExecutor): a client-mode
 * RpcEnv of the test process whose endpoint records what the driver sends it, registered with the
 * driver. The test reports its tasks' states through `driver`.
 */
import { RegisterExecutor } from '../../backend/protocol/executor.js';
import type { WireMessage } from '../../backend/protocol/registry.js';
import { type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { testProtocol } from './protocol.js';
import { Recorder } from './recorder.js';

export async function registerMockExecutor(
  driverUrl: string,
  id: string,
  cores: number,
  /** Where the mock's RpcEnv goes, for the test to stop. */
  envs: RpcEnv[],
): Promise<{ env: RpcEnv; endpoint: Recorder; driver: RpcEndpointRef; reply: WireMessage }> {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: `mockExecutor${id}`,
    clientMode: true,
  });
  envs.push(env);
  const endpoint = new Recorder();
  env.setupEndpoint('Executor', endpoint);
  const driver = await env.setupEndpointRefByURI(driverUrl);
  const reply = await driver.ask(
    RegisterExecutor({
      executorId: id,
      executor: endpoint.self.toData(),
      hostname: '127.0.0.1',
      cores,
      logUrls: {},
    }),
  );
  return { env, endpoint, driver, reply };
}
