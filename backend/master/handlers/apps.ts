import { MasterConf } from '../../conf/master.js';
import {
  ExecutorRegistered,
  MasterChangeAcknowledged,
  RegisterApplication,
  RegisteredApplication,
  RequestExecutors,
  UnregisterApplication,
} from '../../protocol/app.js';
import { KillApplicationResponse, RequestKillApplication } from '../../protocol/client.js';
import { ExecutorStateChanged } from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import { deriveKey } from '../../rpc/credentials.js';
import { type RpcSenderContext, refuse } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { ApplicationInfo } from '../ApplicationInfo.js';
import {
  registerApplication as addRegisteredApplication,
  applicationUnregistered,
  appReregistered,
  executorRegistered,
  executorStateChanged,
  finishedAppExecutorEnded,
  newAppId,
  removeApplication,
  requestExecutors,
} from '../operations/apps.js';
import { schedule } from '../placement.js';
import { checkFromDriver, checkFromWorker, holdsKeyOf } from '../senders.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/** Applications ↔ Master: registration, executor state, and ending an application. */

const log = getLogger('Master');

export function appHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(RegisterApplication, (msg, sender) => registerApplication(m, msg, sender));
  on(UnregisterApplication, async ({ appId, failure, killed }, sender) => {
    const app = m.cluster.appById(appId);
    if (app) {
      checkFromDriver(app, sender, `UnregisterApplication of ${appId}`);
      await applicationUnregistered(m.ops, app, { killed, failure });
    }
  });
  on(RequestExecutors, ({ appId, requestedTotal }, ctx) => {
    const app = m.cluster.appById(appId);
    if (!app) {
      log.warn(`Ignoring RequestExecutors for unknown application ${appId}`);
      return;
    }
    checkFromDriver(app, ctx, `RequestExecutors of ${appId}`);
    requestExecutors(m.ops, app, requestedTotal);
  });
  on(ExecutorRegistered, ({ execId }, ctx) => {
    // The application is the one whose driver's connection this is (not a field it chose).
    const app = appOfConnection(m, ctx);
    const exec = app?.executors.get(execId);
    if (!app || !exec) {
      log.warn(
        `Ignoring ExecutorRegistered for executor ${execId} from ${ctx.senderAddress}: ${app ? `application ${app.id} has no such executor` : 'not the driver of an application'}`,
      );
      return;
    }
    executorRegistered(app, exec);
  });
  on(MasterChangeAcknowledged, (msg, sender) => masterChangeAcknowledged(m, msg, sender));
  on(ExecutorStateChanged, (msg, sender) => onExecutorStateChanged(m, msg, sender));
  on(RequestKillApplication, (msg) => killApplication(m, msg));
}

/** The active application whose driver registered over the connection `sender` came on. */
function appOfConnection(m: HandlerContext, sender: RpcSenderContext): ApplicationInfo | undefined {
  if (!sender.connection) return m.cluster.appByAddress(sender.senderAddress);
  for (const app of m.cluster.activeApps()) if (app.connection === sender.connection) return app;
  return undefined;
}

async function registerApplication(
  m: HandlerContext,
  msg: MessageOf<typeof RegisterApplication>,
  sender: RpcSenderContext,
): Promise<void> {
  if (m.status === 'STANDBY') return;
  const principal = sender.connection?.principal;
  if (principal?.kind === 'app') {
    throw refuse(
      'RegisterApplication',
      "an application's key opens that application alone; a new one is registered with a submission's key or the cluster secret",
    );
  }
  const driver = sender.connection
    ? m.rpc.refOver(sender.connection, msg.driver.name)
    : m.rpc.endpointRef(msg.driver);
  log.info(`Registering app ${msg.appDescription.name}`);
  const now = m.clock.now();
  const submission = principal?.kind === 'submission' ? principal.id : undefined;
  const app = new ApplicationInfo(
    await newAppId(m.ops, now),
    msg.appDescription,
    driver,
    now,
    m.conf.get(MasterConf.defaultCores),
    submission,
    submission === undefined ? undefined : ownerOfSubmission(m, submission),
  );
  app.connection = sender.connection;
  if (!(await addRegisteredApplication(m.ops, app))) return;
  const secret = m.rpc.clusterSecret;
  driver.send(
    RegisteredApplication({
      appId: app.id,
      master: m.self.toData(),
      appKey: secret === undefined ? undefined : deriveKey(secret, 'app', app.id),
      ...(m.conf.get(MasterConf.eventLogByDefault) ? { eventLogByDefault: true } : {}),
    }),
  );
  schedule(m.ops);
}

/**
 * The user's token a submission belongs to: a cluster-mode driver's (`driver-…`) is in its record,
 * which survives a failover; a client-mode one's was noted when the token asked for its key.
 */
function ownerOfSubmission(m: HandlerContext, submission: string): string | undefined {
  return m.cluster.findDriver(submission)?.owner ?? m.tokenOwnerOf(submission);
}

async function masterChangeAcknowledged(
  m: HandlerContext,
  { appId }: MessageOf<typeof MasterChangeAcknowledged>,
  sender: RpcSenderContext,
): Promise<void> {
  const app = m.cluster.appById(appId);
  if (app) {
    if (!holdsKeyOf(app, sender)) {
      throw refuse(
        `MasterChangeAcknowledged of ${appId}`,
        "only that application's driver may send it (it proves the key the application registered with)",
      );
    }
    appReregistered(
      m.ops,
      app,
      sender.connection
        ? {
            connection: sender.connection,
            driver: m.rpc.refOver(sender.connection, app.driver.name),
          }
        : undefined,
    );
  } else {
    log.warn(`Master change ack from unknown app: ${appId}`);
  }
  await m.completeRecoveryIfAnswered();
}

async function onExecutorStateChanged(
  m: HandlerContext,
  msg: MessageOf<typeof ExecutorStateChanged>,
  sender: RpcSenderContext,
): Promise<void> {
  const app = m.cluster.appById(msg.appId);
  const exec = app?.executors.get(msg.execId);
  if (app && exec) {
    checkFromWorker(exec.worker, sender, `ExecutorStateChanged of ${exec.fullId}`);
    await executorStateChanged(m.ops, app, exec, msg);
    return;
  }
  // The true end of an executor of an application that has ended (see finishedAppExecutorEnded).
  const done = m.cluster.completedAppById(msg.appId);
  const removed = done?.removedExecutors.find((e) => e.id === msg.execId);
  if (done && removed) {
    checkFromWorker(removed.worker, sender, `ExecutorStateChanged of ${removed.fullId}`);
    finishedAppExecutorEnded(m.ops, done, removed, msg);
    return;
  }
  log.warn(`Got status update for unknown executor ${msg.appId}/${msg.execId}`);
}

async function killApplication(
  m: HandlerContext,
  { appId }: MessageOf<typeof RequestKillApplication>,
) {
  if (m.status !== 'ALIVE') {
    return KillApplicationResponse({
      appId,
      success: false,
      message: `Current state is not alive: ${m.status}. Can only kill applications in ALIVE state.`,
    });
  }
  const app = m.cluster.appById(appId);
  if (!app) {
    return KillApplicationResponse({
      appId,
      success: false,
      message: `Application ${appId} has already finished or does not exist`,
    });
  }
  log.info(`Asked to kill application ${appId}`);
  await removeApplication(m.ops, app, 'KILLED');
  return KillApplicationResponse({ appId, success: true, message: `Killed application ${appId}` });
}
