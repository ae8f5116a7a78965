import type { Registry } from 'prom-client';
import type { UiServer } from '../UiServer.js';

/** Where Prometheus scrapes a web UI, as Spark's master and worker UIs serve it. */
export const PROMETHEUS_PATH = '/metrics/prometheus';

/**
 * Serves `registry` in Prometheus' text format at /metrics/prometheus, behind the UI's login like
 * every route but /health (a scraper sends `Authorization: Bearer <cluster secret>`). 503 while
 * the process has nothing to show yet, or when reading its state failed: a scrape that fails is
 * recorded by Prometheus as `up == 0`, which is what an operator should see, rather than a page
 * of zeros.
 */
export function mountPrometheus(
  ui: UiServer,
  registry: Registry,
  notReady: () => string | undefined,
): void {
  ui.app.get(PROMETHEUS_PATH, async (c) => {
    const why = notReady();
    if (why !== undefined) return c.text(`${why}\n`, 503);
    let text: string;
    try {
      text = await registry.metrics();
    } catch (err) {
      return c.text(`Could not read the metrics: ${(err as Error).message}\n`, 503);
    }
    return c.body(text, 200, { 'Content-Type': registry.contentType });
  });
}
