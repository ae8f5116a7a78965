/**
 * How a master learns that it leads (Spark's LeaderElectionAgent). The agent calls back into the
 * master, which turns the call into a message to itself so that it is handled in order with
 * everything else. With one master (recovery mode NONE or FILESYSTEM) the master leads at once;
 * ZooKeeper's agent, for standby masters, implements the same interface.
 */
export interface LeaderElectable {
  electedLeader(): void;
  revokedLeadership(): void;
  /** Every master in the election by URL, the leader first (ZooKeeper's agent only). */
  mastersChanged?(urls: string[]): void;
}

export interface LeaderElectionAgent {
  stop(): Promise<void>;
}

export type LeaderElectionAgentFactory = (master: LeaderElectable) => LeaderElectionAgent;

/** The only master there is, so the leader (Spark's MonarchyLeaderAgent). */
export const monarchyLeaderAgent: LeaderElectionAgentFactory = (master) => {
  master.electedLeader();
  return { stop: async () => {} };
};
