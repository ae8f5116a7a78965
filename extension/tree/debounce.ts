/**
 * Calls `fn` once, `ms` after the last of a burst of calls. `flushed()` lets a caller act on what
 * the burst shows (reveal a node it added): it resolves at once when nothing is pending, else
 * right after the pending call has run.
 */
export interface Debounced {
  (): void;
  flushed(): Promise<void>;
  dispose(): void;
}

export function debounce(fn: () => void, ms: number): Debounced {
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];
  const release = () => {
    const done = waiters;
    waiters = [];
    for (const w of done) w();
  };
  const run = () => {
    timer = undefined;
    try {
      fn();
    } finally {
      release();
    }
  };
  const d = () => {
    clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  d.flushed = () =>
    timer === undefined ? Promise.resolve() : new Promise<void>((r) => waiters.push(r));
  d.dispose = () => {
    clearTimeout(timer);
    timer = undefined;
    // Nothing will run any more: whoever waits must not wait forever.
    release();
  };
  return d;
}
