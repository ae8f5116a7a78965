/**
 * Time as a dependency. Heartbeats, ask timeouts and back-off take a Clock so that tests can drive
 * time by hand instead of sleeping (the idea of vscode-jsonrpc's RAL).
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    // A pending timer must never keep a process alive on its own: a daemon stays up because of
    // its sockets, not because an ask is waiting to time out.
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  private time: number;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => !t.cancelled && t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.time = due.at;
      due.cancelled = true;
      due.fn();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.time = target;
  }

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
