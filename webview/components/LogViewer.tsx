/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { DataSource } from '../data/DataSource.js';
import { decodeBase64 } from '../data/DataSource.js';
import { formatBytes } from '../format.js';
import type { LogSource } from '../protocol.js';
import { useDashboard } from './context.js';

/** Spark's log page default: the last 100 KiB. */
export const LOG_PAGE_BYTES = 100 * 1024;

export function logTitle(source: LogSource): string {
  return source.driverId !== undefined
    ? `${source.logType} of driver ${source.driverId}`
    : `${source.logType} of executor ${source.executorId} of ${source.appId}`;
}

interface View {
  text: string;
  /** Byte offsets of what is shown, and the file's size when last heard of. */
  start: number;
  end: number;
  total: number;
}

/**
 * A log, paged as Spark's log page pages it (byte offset and length): the last 100 KiB first,
 * "Load more" for earlier bytes, "Load new" for bytes written since; and followed as it is written
 * (the host pushes chunks with their offsets, so nothing is lost or repeated), until the process
 * has exited or the user stops it.
 */
export function LogViewer({
  source,
  pageBytes = LOG_PAGE_BYTES,
}: {
  source: LogSource;
  pageBytes?: number;
}) {
  const { source: data, announce } = useDashboard();
  const [view, setView] = useState<View | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [following, setFollowing] = useState(false);
  const [ended, setEnded] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const viewRef = useRef<View | undefined>(undefined);
  const stopFollow = useRef<(() => void) | undefined>(undefined);
  const tail = useRef(new TextDecoder());
  const pre = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  const key = JSON.stringify(source);

  const update = useCallback((v: View) => {
    viewRef.current = v;
    setView(v);
  }, []);

  const append = useCallback(
    (offset: number, bytes: Uint8Array, total?: number) => {
      const v = viewRef.current;
      if (!v) return;
      // Keep only the bytes after what is shown: a chunk may repeat what "Load new" already read.
      const skip = v.end - offset;
      if (skip < 0 || skip > bytes.length) return;
      const fresh = bytes.subarray(skip);
      const end = v.end + fresh.length;
      update({
        text: v.text + tail.current.decode(fresh, { stream: true }),
        start: v.start,
        end,
        total: Math.max(total ?? 0, end, v.total),
      });
    },
    [update],
  );

  const follow = useCallback(
    (ds: DataSource) => {
      const v = viewRef.current;
      if (!v || stopFollow.current) return;
      setEnded(undefined);
      setFollowing(true);
      stopFollow.current = ds.followLog(source, v.end, {
        chunk: (offset, bytes) => append(offset, bytes),
        ended: (_total, reason) => {
          stopFollow.current = undefined;
          setFollowing(false);
          setEnded(reason);
        },
      });
    },
    [key, append],
  );

  const unfollow = useCallback(() => {
    stopFollow.current?.();
    stopFollow.current = undefined;
    setFollowing(false);
    setEnded('stopped');
  }, []);
  useEffect(() => {
    if (!data) return;
    let live = true;
    viewRef.current = undefined;
    setView(undefined);
    setError(undefined);
    setEnded(undefined);
    tail.current = new TextDecoder();
    stick.current = true;
    data.readLog(source, undefined, pageBytes).then(
      (r) => {
        if (!live) return;
        const bytes = decodeBase64(r.data);
        update({
          text: tail.current.decode(bytes, { stream: true }),
          start: r.offset,
          end: r.offset + r.length,
          total: r.totalSize,
        });
        follow(data);
      },
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
      stopFollow.current?.();
      stopFollow.current = undefined;
      setFollowing(false);
    };
  }, [data, key, pageBytes]);

  const loadMore = async () => {
    const v = viewRef.current;
    if (!data || !v || v.start === 0) return;
    setBusy(true);
    try {
      const from = Math.max(0, v.start - pageBytes);
      const r = await data.readLog(source, from, v.start - from);
      const cur = viewRef.current;
      if (!cur) return;
      const text = new TextDecoder().decode(decodeBase64(r.data));
      update({
        ...cur,
        text: text + cur.text,
        start: r.offset,
        total: Math.max(cur.total, r.totalSize),
      });
      announce(`Loaded ${formatBytes(r.length)} of earlier log`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const loadNew = async () => {
    const v = viewRef.current;
    if (!data || !v) return;
    setBusy(true);
    try {
      const r = await data.readLog(source, v.end, pageBytes);
      const before = viewRef.current?.end ?? 0;
      append(r.offset, decodeBase64(r.data), r.totalSize);
      const got = (viewRef.current?.end ?? 0) - before;
      announce(got > 0 ? `Loaded ${formatBytes(got)} of new log` : 'No new log');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  // Stay at the bottom while following, unless the user scrolled up to read.
  useLayoutEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [view]);

  const title = logTitle(source);
  return (
    <div class="log-viewer">
      <div class="log-toolbar" role="toolbar" aria-label="Log">
        <vscode-button
          secondary
          onClick={loadMore}
          disabled={!view || view.start === 0 || busy}
          aria-label="Load more: earlier bytes of the log"
        >
          Load more
        </vscode-button>
        <vscode-button
          secondary
          onClick={loadNew}
          disabled={!view || busy}
          aria-label="Load new: bytes written since"
        >
          Load new
        </vscode-button>
        <vscode-button
          onClick={() => (following ? unfollow() : data && follow(data))}
          disabled={!view}
          role="button"
          aria-pressed={following ? 'true' : 'false'}
          class="follow"
        >
          {following ? 'Stop following' : 'Follow'}
        </vscode-button>
        <span class="log-range" data-testid="log-range">
          {view ? `Bytes ${view.start}-${view.end} of ${view.total}` : error ? '' : 'Loading…'}
        </span>
        <span class="log-status" aria-live="polite">
          {following ? 'Following' : ended ? `Not following: ${ended}` : ''}
        </span>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <pre
        ref={pre}
        class="log"
        role="log"
        aria-live="off"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus, or keyboard users cannot scroll it
        tabIndex={0}
        aria-label={title}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
        }}
      >
        {view?.text}
      </pre>
    </div>
  );
}
