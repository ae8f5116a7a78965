import { useEffect, useState } from 'preact/hooks';
import { useDashboard } from '../components/context.js';

export interface ApiResult<T> {
  data: T | undefined;
  error: string | undefined;
}

/**
 * `/api/v1` + `path`, read again whenever `version` changes: the application's pushed progress
 * (its lastUpdated and state), so that the pages follow a running application without polling.
 * The last answer stays on screen while the next is asked; an answer older than the one shown
 * is dropped.
 */
export function useApi<T>(path: string | undefined, version: unknown): ApiResult<T> {
  const { source } = useDashboard();
  const [result, setResult] = useState<ApiResult<T> & { path?: string }>({
    data: undefined,
    error: undefined,
  });
  useEffect(() => {
    if (!source || path === undefined) return;
    let current = true;
    source.api(path).then(
      (data) => current && setResult({ data: data as T, error: undefined, path }),
      (err: Error) => current && setResult((r) => ({ ...r, error: err.message, path })),
    );
    return () => {
      current = false;
    };
  }, [source, path, version]);
  // A new path shows nothing of the old one's answer.
  return result.path === path ? result : { data: undefined, error: undefined };
}

/** What changes when an application's jobs, stages or executors do (pushed by the master). */
export function appVersion(app: { state: string; progress?: { lastUpdated: number } } | undefined) {
  return app ? `${app.state}:${app.progress?.lastUpdated ?? 0}` : 'none';
}
