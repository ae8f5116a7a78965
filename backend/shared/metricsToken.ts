import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The scrape token: a credential for /metrics/prometheus alone, made from the cluster secret
 * (HMAC-SHA256 under it of a message naming its use, as uiLogin.ts makes its links and sessions),
 * so that Prometheus need not hold the secret itself, which can do anything in the cluster. Every
 * web UI of the cluster checks it without keeping anything; `wick ui-url --metrics-token` prints
 * it. It does not expire (a scraper needs a lasting credential): changing the secret revokes it.
 */

const PREFIX = 'wick-metrics.';

export function metricsScrapeToken(secret: string): string {
  return `${PREFIX}${createHmac('sha256', secret).update('wick-ui-metrics:v1').digest('base64url')}`;
}

/** Whether `given` is this cluster's scrape token (compared in constant time). */
export function isMetricsScrapeToken(given: string, secret: string): boolean {
  const want = Buffer.from(metricsScrapeToken(secret));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want);
}
