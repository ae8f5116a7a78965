import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isMetricsScrapeToken, metricsScrapeToken } from '../../backend/shared/metricsToken.js';
import { mintSession } from '../../backend/shared/uiLogin.js';

test('the scrape token: one per secret, lasting, and no other credential stands for it', () => {
  const a = metricsScrapeToken('secret-a-0123456789');
  assert.match(a, /^wick-metrics\.[A-Za-z0-9_-]{43}$/);
  assert.equal(metricsScrapeToken('secret-a-0123456789'), a);
  assert.notEqual(metricsScrapeToken('secret-b-0123456789'), a);
  assert.ok(isMetricsScrapeToken(a, 'secret-a-0123456789'));
  assert.ok(!isMetricsScrapeToken(a, 'secret-b-0123456789'));
  assert.ok(!isMetricsScrapeToken('secret-a-0123456789', 'secret-a-0123456789'));
  assert.ok(!isMetricsScrapeToken(mintSession('secret-a-0123456789'), 'secret-a-0123456789'));
  assert.ok(!isMetricsScrapeToken(`${a}x`, 'secret-a-0123456789'));
  assert.ok(!isMetricsScrapeToken('', 'secret-a-0123456789'));
});
