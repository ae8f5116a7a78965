import type { WickConf } from '../conf/WickConf.js';
import { WorkerConf } from '../conf/worker.js';
import type { WireMessage } from '../protocol/registry.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { ReregisterWithMaster, SendHeartbeat } from './messages.js';

const log = getLogger('Worker');

/** What the connection needs of a master's endpoint. */
export type MasterRef = Pick<RpcEndpointRef, 'address' | 'send'>;

/**
 * The worker's side of the wire, as the connection uses it: bound lazily, since the endpoint has
 * no RpcEnv until it is set up.
 */
export interface WorkerLink {
  /** A ref to the Master endpoint at host:port, once it is known to exist. */
  connect(address: string): Promise<MasterRef>;
  /** RegisterWorker for the master at `address`. */
  registration(address: string): WireMessage;
  heartbeat(): WireMessage;
  /** Posts a self-message to the worker's inbox, where its timers' work is done. */
  post(message: WireMessage): void;
  /** The worker's RpcEnv is stopping: nothing more is sent or scheduled. */
  stopped(): boolean;
}

export interface MasterConnectionOptions {
  readonly masterAddresses: readonly string[];
  readonly conf: WickConf;
  readonly clock: Clock;
  readonly random: () => number;
  /** How often a registered worker heartbeats (wick.worker.timeout / 4). */
  readonly heartbeatMs: number;
  /** Ends the process (the worker gave up registering). */
  readonly exit: (code: number, reason: string) => void;
  readonly link: WorkerLink;
  /** Told when the master it follows changes (the worker's page shows it). */
  readonly changed?: () => void;
}

/**
 * The worker's connection to its master (Spark's Worker.registerWithMaster,
 * reregisterWithMaster, changeMaster and the heartbeat): registration with every configured
 * master, retried on a randomised timer until one answers or the retries run out; once
 * registered, a heartbeat every heartbeatMs; the master it follows, which a MasterChanged
 * replaces; a lost connection starts registration again. The timers only post self-messages
 * (ReregisterWithMaster, SendHeartbeat): the work happens in the worker's inbox, in order with
 * the messages from the master.
 */
export class MasterConnection {
  private isRegistered = false;
  private isConnected = false;
  private master: MasterRef | undefined;
  /** host:port of the master this worker follows, as configured (the retries go there). */
  private masterAddress: string | undefined;
  private masterUrl: string | undefined;
  private masterWebUiUrl: string | undefined;
  private attempts = 0;
  private registrationTimer: TimerHandle | undefined;
  private heartbeatTimer: TimerHandle | undefined;

  constructor(private readonly o: MasterConnectionOptions) {}

  get registered(): boolean {
    return this.isRegistered;
  }

  /** A master answered and its connection has not been lost since. */
  get connected(): boolean {
    return this.isConnected;
  }

  /** `wick://host:port` of the master this worker follows; only it may launch and kill here. */
  get activeMasterUrl(): string | undefined {
    return this.masterUrl;
  }

  /** host:port of the master this worker follows, as its RpcEnv announces itself. */
  get activeMasterAddress(): string | undefined {
    return this.master?.address;
  }

  get activeMasterWebUiUrl(): string | undefined {
    return this.masterWebUiUrl;
  }

  /** Retries since registration last started. */
  get connectionAttemptCount(): number {
    return this.attempts;
  }

  get heartbeatMs(): number {
    return this.o.heartbeatMs;
  }

  /** Registers with every master now, and retries on a timer until one answers. */
  register(): void {
    if (this.registrationTimer) {
      log.info(
        'Not spawning another attempt to register with the master, since there is an attempt scheduled already.',
      );
      return;
    }
    this.isRegistered = false;
    this.tryRegisterAllMasters();
    this.attempts = 0;
    this.scheduleRetry();
  }

  /** ReregisterWithMaster: the retry timer fired. */
  retry(): void {
    this.registrationTimer = undefined;
    this.attempts++;
    if (this.isRegistered) return;
    if (this.attempts <= this.o.conf.get(WorkerConf.maxRegistrationRetries)) {
      log.info(`Retrying connection to master (attempt # ${this.attempts})`);
      // SPARK-4592: once a master is known, re-register only with it, so that a worker does not
      // end up registered with two masters after a failover.
      if (this.master && this.masterAddress) this.sendRegistration(this.masterAddress);
      else this.tryRegisterAllMasters();
      this.scheduleRetry();
    } else {
      log.error('All masters are unresponsive! Giving up.');
      this.o.exit(1, 'All masters are unresponsive! Giving up.');
    }
  }

  /** RegisteredWorker: follows that master and heartbeats to it. */
  registeredWith(master: MasterRef, webUiUrl: string, address: string): void {
    log.info(`Successfully registered with master wick://${master.address}`);
    this.isRegistered = true;
    this.cancelRetry();
    this.changeMaster(master, webUiUrl, address);
    this.startHeartbeats();
  }

  /** Follows another master (registration, or MasterChanged after a failover). */
  changeMaster(master: MasterRef, webUiUrl: string, address: string): void {
    this.master = master;
    this.masterAddress = address;
    this.masterUrl = `wick://${master.address}`;
    this.masterWebUiUrl = webUiUrl;
    this.isConnected = true;
    this.cancelRetry();
    this.o.changed?.();
  }

  /** SendHeartbeat: the heartbeat timer fired. */
  sendHeartbeat(): void {
    if (this.isConnected) this.send(this.o.link.heartbeat());
  }

  /** Sends to the master this worker follows; dropped, with a warning, before there is one. */
  send(message: WireMessage): void {
    // During shutdown, runners killed by onStop still report how they ended; the env is stopping
    // and would throw, and there is no master connection left to tell anyway.
    if (this.o.link.stopped()) return;
    if (!this.master) {
      log.warn(
        `Dropping ${message.type} because the connection to master has not yet been established`,
      );
      return;
    }
    this.master.send(message);
  }

  /** A connection was lost; if it was the master's, registration starts again. */
  disconnected(address: string): void {
    if (this.master?.address !== address) return;
    log.error(`Connection to master ${address} failed! Waiting for master to reconnect...`);
    this.isConnected = false;
    this.register();
  }

  /** Cancels the timers (worker shutdown). */
  stop(): void {
    this.cancelRetry();
    this.heartbeatTimer?.cancel();
    this.heartbeatTimer = undefined;
  }

  private cancelRetry(): void {
    this.registrationTimer?.cancel();
    this.registrationTimer = undefined;
  }

  private scheduleRetry(): void {
    const initial = this.attempts < this.o.conf.get(WorkerConf.initialRegistrationRetries);
    const base = this.o.conf.get(
      initial ? WorkerConf.initialRegistrationInterval : WorkerConf.prolongedRegistrationInterval,
    );
    // ×0.5 to ×1.5, so that workers restarted together do not all knock at once.
    const delay = Math.round(base * (0.5 + this.o.random()));
    this.registrationTimer = this.o.clock.setTimeout(() => {
      if (!this.o.link.stopped()) this.o.link.post(ReregisterWithMaster({}));
    }, delay);
  }

  private tryRegisterAllMasters(): void {
    for (const address of this.o.masterAddresses) this.sendRegistration(address);
  }

  private sendRegistration(address: string): void {
    log.info(`Connecting to master ${address}...`);
    this.o.link
      .connect(address)
      .then((ref) => ref.send(this.o.link.registration(address)))
      .catch((err: Error) => log.warn(`Failed to connect to master ${address}: ${err.message}`));
  }

  private startHeartbeats(): void {
    this.heartbeatTimer?.cancel();
    const tick = () => {
      if (this.o.link.stopped()) return;
      this.o.link.post(SendHeartbeat({}));
      this.heartbeatTimer = this.o.clock.setTimeout(tick, this.o.heartbeatMs);
    };
    tick();
  }
}
