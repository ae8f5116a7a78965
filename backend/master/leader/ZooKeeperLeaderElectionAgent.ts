import { getLogger } from '../../util/log.js';
import { CreateMode, ZkConnection } from '../zookeeper/ZkConnection.js';
import type {
  LeaderElectable,
  LeaderElectionAgent,
  LeaderElectionAgentFactory,
} from './LeaderElectionAgent.js';

const log = getLogger('ZooKeeperLeaderElectionAgent');
const PREFIX = 'latch-';

export interface ZooKeeperElectionOptions {
  url: string;
  /** wick.deploy.zookeeper.dir; the election happens in `<dir>/leader_election`. */
  dir: string;
  sessionTimeoutMs: number;
  /** Stored in this master's znode, to tell who is who when looking at ZooKeeper. */
  label: () => string;
}

/**
 * Leader election on ZooKeeper (Spark's ZooKeeperLeaderElectionAgent, without Curator): each
 * master creates an ephemeral sequential znode `<dir>/leader_election/latch-<seq>`; the one with
 * the lowest sequence leads, every other watches the znode just before its own and looks again
 * when it goes. A master that dies loses its znode when its session expires (a master that stops
 * cleanly closes its session, so its znode goes at once).
 *
 * Losing the connection to ZooKeeper makes the leader step down to STANDBY at once (Spark's Curator
 * latch does the same on SUSPENDED; Spark's master then exits, Wick's stays up): another master may
 * be elected once the session expires, and two leaders must never write at the same time. When the
 * connection is back it takes part in the election again, and leads again if its znode is still
 * the lowest.
 */
export function zooKeeperLeaderAgent(
  options: ZooKeeperElectionOptions,
): LeaderElectionAgentFactory {
  return (master) => new ZooKeeperLeaderElectionAgent(master, options);
}

class ZooKeeperLeaderElectionAgent implements LeaderElectionAgent {
  private readonly zk: ZkConnection;
  private readonly electionDir: string;
  private myNode: string | undefined;
  private leader = false;
  private stopped = false;
  private checking = false;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Whether a watch on the election's children is set (one at a time: ZooKeeper's are one-shot). */
  private watchingChildren = false;
  private lastMasters = '';

  constructor(
    private readonly master: LeaderElectable,
    private readonly options: ZooKeeperElectionOptions,
  ) {
    this.electionDir = `${options.dir.replace(/\/+$/, '')}/leader_election`;
    log.info(`Starting ZooKeeper leader election at ${options.url} in ${this.electionDir}`);
    this.zk = new ZkConnection(options.url, options.sessionTimeoutMs);
    this.zk.on('connected', () => void this.check());
    this.zk.on('disconnected', () => {
      if (this.stopped) return;
      if (this.leader) {
        log.error(
          `Lost the connection to ZooKeeper at ${options.url}: stepping down to STANDBY until it is back`,
        );
      } else {
        log.warn(`Lost the connection to ZooKeeper at ${options.url}; staying STANDBY`);
      }
      this.setLeader(false);
    });
    this.zk.on('expired', () => {
      this.myNode = undefined;
      this.watchingChildren = false;
      this.setLeader(false);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    // Closing the session deletes this master's znode: the next master is elected at once.
    this.zk.close();
  }

  private async check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.again = false;
        await this.checkOnce();
      } while (this.again && !this.stopped);
    } catch (err) {
      if (!this.stopped) {
        log.warn(`Leader election: ${(err as Error).message}; trying again`);
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => {
          if (this.zk.isConnected) void this.check();
        }, 500);
      }
    } finally {
      this.checking = false;
    }
  }

  private async checkOnce(): Promise<void> {
    if (this.stopped || !this.zk.isConnected) return;
    await this.zk.mkdirp(this.electionDir);
    let children = await this.latches();
    const mine = this.myNode?.slice(this.electionDir.length + 1);
    if (!mine || !children.includes(mine)) {
      this.myNode = await this.zk.create(
        `${this.electionDir}/${PREFIX}`,
        Buffer.from(this.options.label()),
        CreateMode.EPHEMERAL_SEQUENTIAL,
      );
      children = await this.latches();
    }
    if (this.stopped || !this.myNode) return;
    await this.publishMasters();
    const name = this.myNode.slice(this.electionDir.length + 1);
    const i = children.indexOf(name);
    if (i < 0) {
      this.myNode = undefined;
      this.again = true;
      return;
    }
    if (i === 0) {
      this.setLeader(true);
      return;
    }
    this.setLeader(false);
    const before = `${this.electionDir}/${children[i - 1]}`;
    const exists = await this.zk.existsWatch(before, () => void this.check());
    if (!exists) this.again = true;
  }

  /**
   * Tells the master every master's URL (the data of each latch znode), the leader first, and
   * watches the election so as to tell it again when a master comes or goes.
   */
  private async publishMasters(): Promise<void> {
    if (!this.master.mastersChanged) return;
    let children: string[];
    if (this.watchingChildren) {
      children = await this.zk.getChildren(this.electionDir);
    } else {
      this.watchingChildren = true;
      children = await this.zk
        .getChildrenWatch(this.electionDir, () => {
          this.watchingChildren = false;
          void this.check();
        })
        .catch((err) => {
          this.watchingChildren = false;
          throw err;
        });
    }
    const latches = children.filter((c) => c.startsWith(PREFIX)).sort((a, b) => seq(a) - seq(b));
    const urls: string[] = [];
    for (const c of latches) {
      const data = await this.zk.getData(`${this.electionDir}/${c}`);
      if (data?.length) urls.push(data.toString('utf8'));
    }
    const key = urls.join(',');
    if (this.stopped || key === this.lastMasters) return;
    this.lastMasters = key;
    this.master.mastersChanged(urls);
  }

  /** This election's znodes, lowest sequence first. */
  private async latches(): Promise<string[]> {
    const children = (await this.zk.getChildren(this.electionDir)).filter((c) =>
      c.startsWith(PREFIX),
    );
    return children.sort((a, b) => seq(a) - seq(b));
  }

  private setLeader(leader: boolean): void {
    if (this.stopped || leader === this.leader) return;
    this.leader = leader;
    if (leader) {
      log.info('We have gained leadership');
      this.master.electedLeader();
    } else {
      log.warn('We have lost leadership');
      this.master.revokedLeadership();
    }
  }
}

function seq(name: string): number {
  return Number(name.slice(PREFIX.length));
}
