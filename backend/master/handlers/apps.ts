import {
  ExecutorUpdated,
  type MasterChangeAcknowledged,
  type RegisterApplication,
  RegisteredApplication,
  type UnregisterApplication,
} from '../../protocol/app.js';
import { KillApplicationResponse, type RequestKillApplication } from '../../protocol/client.js';
import { isExecutorFinished } from '../../protocol/common.js';
import type { ExecutorStateChanged } from '../../protocol/deploy.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import { getLogger } from '../../util/log.js';
import { MasterConf } from '../config.js';
import type { Master } from '../Master.js';
import { completeRecovery } from '../recovery.js';

/** Applications ↔ Master: registration, executor state, and ending an application. */

const log = getLogger('Master');

export async function receive(m: Master, msg: WireMessage): Promise<boolean> {
  switch (msg.type) {
    case 'RegisterApplication':
      await registerApplication(m, msg as MessageOf<typeof RegisterApplication>);
      return true;
    case 'UnregisterApplication': {
      const app = m.idToApp.get((msg as MessageOf<typeof UnregisterApplication>).appId);
      if (app) {
        log.info(`Received unregister request from application ${app.id}`);
        await m.removeApplication(app, 'FINISHED');
      }
      return true;
    }
    case 'MasterChangeAcknowledged': {
      const { appId } = msg as MessageOf<typeof MasterChangeAcknowledged>;
      const app = m.idToApp.get(appId);
      if (app) {
        log.info(`Application has been re-registered: ${appId}`);
        app.state = 'WAITING';
        m.broadcaster.app(app);
      } else {
        log.warn(`Master change ack from unknown app: ${appId}`);
      }
      if (m.state === 'RECOVERING' && m.canCompleteRecovery()) await completeRecovery(m);
      return true;
    }
    case 'ExecutorStateChanged':
      await executorStateChanged(m, msg as MessageOf<typeof ExecutorStateChanged>);
      return true;
    default:
      return false;
  }
}

export async function reply(m: Master, msg: WireMessage): Promise<WireMessage | undefined> {
  if (msg.type !== 'RequestKillApplication') return undefined;
  const { appId } = msg as MessageOf<typeof RequestKillApplication>;
  if (m.state !== 'ALIVE') {
    return KillApplicationResponse({
      appId,
      success: false,
      message: `Current state is not alive: ${m.state}. Can only kill applications in ALIVE state.`,
    });
  }
  const app = m.idToApp.get(appId);
  if (!app) {
    return KillApplicationResponse({
      appId,
      success: false,
      message: `Application ${appId} has already finished or does not exist`,
    });
  }
  log.info(`Asked to kill application ${appId}`);
  await m.removeApplication(app, 'KILLED');
  return KillApplicationResponse({ appId, success: true, message: `Killed application ${appId}` });
}

async function registerApplication(
  m: Master,
  msg: MessageOf<typeof RegisterApplication>,
): Promise<void> {
  if (m.state === 'STANDBY') return;
  const driver = m.rpcEnv.endpointRef(msg.driver);
  log.info(`Registering app ${msg.appDescription.name}`);
  const app = m.createApplication(msg.appDescription, driver);
  if (!m.registerApplication(app)) return;
  log.info(`Registered app ${msg.appDescription.name} with ID ${app.id}`);
  await m.persistence.addApplication({
    id: app.id,
    desc: app.desc,
    driver: driver.toData(),
    startTime: app.startTime,
  });
  driver.send(RegisteredApplication({ appId: app.id, master: m.self.toData() }));
  m.schedule();
}

async function executorStateChanged(
  m: Master,
  msg: MessageOf<typeof ExecutorStateChanged>,
): Promise<void> {
  const app = m.idToApp.get(msg.appId);
  const exec = app?.executors.get(msg.execId);
  if (!app || !exec) {
    log.warn(`Got status update for unknown executor ${msg.appId}/${msg.execId}`);
    return;
  }
  exec.setState(msg.state, m.clock.now(), msg.message, msg.exitStatus);
  if (msg.state === 'RUNNING') app.retryCount = 0;
  app.driver.send(
    ExecutorUpdated({
      id: msg.execId,
      state: msg.state,
      message: msg.message,
      exitStatus: msg.exitStatus,
      workerLost: false,
    }),
  );
  m.broadcaster.app(app);
  if (isExecutorFinished(msg.state)) {
    log.info(`Removing executor ${exec.fullId} because it is ${msg.state}`);
    app.removeExecutor(exec);
    exec.worker.removeExecutor(exec);
    m.broadcaster.worker(exec.worker);
    const normalExit = msg.exitStatus === 0;
    const maxRetries = m.conf.get(MasterConf.maxExecutorRetries);
    if (!normalExit && maxRetries >= 0 && ++app.retryCount >= maxRetries) {
      const running = [...app.executors.values()].some((e) => e.state === 'RUNNING');
      if (!running) {
        log.error(
          `Application ${app.desc.name} with ID ${app.id} failed ${app.retryCount} times; removing it`,
        );
        await m.removeApplication(app, 'FAILED');
        return;
      }
    }
  }
  m.schedule();
}
