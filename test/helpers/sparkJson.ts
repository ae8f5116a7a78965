import assert from 'node:assert/strict';

/** The top-level fields of Spark's master /json, which Wick's /json and `status --json` keep. */
export const SPARK_MASTER_JSON_KEYS = [
  'url',
  'workers',
  'aliveworkers',
  'cores',
  'coresused',
  'memory',
  'memoryused',
  'activeapps',
  'completedapps',
  'activedrivers',
  'completeddrivers',
  'status',
] as const;

/** Fails naming the first of Spark's /json fields that `json` lacks. */
export function assertSparkMasterJson(json: Record<string, unknown>, what = '/json'): void {
  for (const key of SPARK_MASTER_JSON_KEYS) assert.ok(key in json, `${what} lacks ${key}`);
}
