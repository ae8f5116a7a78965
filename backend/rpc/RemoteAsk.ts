import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { WireMessage } from '../protocol/registry.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { OutboxItem } from './Outbox.js';
import type { RpcEndpointRef } from './RpcEndpointRef.js';
import type { Session } from './Session.js';

/**
 * One ask to a remote endpoint, from its outbox to its reply. It is a class, not a set of closures,
 * because every remote ask makes one: methods cost nothing per ask.
 */
export class RemoteAsk implements OutboxItem {
  /** The timer that fails the ask while it waits for a connection. */
  queued: TimerHandle | undefined;
  private settled = false;

  constructor(
    private readonly clock: Clock,
    private readonly ref: RpcEndpointRef,
    /** What is wrong with a reply, if anything (RpcEnv's check against the message registry). */
    private readonly replyProblem: (result: unknown) => string | undefined,
    private readonly params: { to: string; from: string; message: WireMessage },
    private readonly deadline: number,
    private readonly timeoutMessage: string,
    private readonly resolve: (reply: WireMessage) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  run(conn: Session): void {
    if (this.settled) return;
    this.queued?.cancel();
    const left = Math.max(1, this.deadline - this.clock.now());
    conn.request(this.params.message.type, this.params, left, this.timeoutMessage).then(
      (result) => this.settle(result),
      (err: Error) => this.fail(err),
    );
  }

  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.queued?.cancel();
    this.reject(err);
  }

  private settle(result: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const problem = this.replyProblem(result);
    if (problem) {
      this.reject(
        new RpcError(
          RpcErrorCode.InvalidReply,
          `Invalid reply to ${this.params.message.type} from ${this.ref}: ${problem}`,
        ),
      );
    } else {
      this.resolve(result as WireMessage);
    }
  }
}
