import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { configDocPath, renderConfigDoc } from '../../scripts/gen-config-docs.js';

test('docs/configuration.md lists every setting the code declares', () => {
  const expected = renderConfigDoc();
  const actual = readFileSync(configDocPath, 'utf8');
  assert.equal(actual, expected, 'docs/configuration.md is stale: run `npm run config-docs`');
  for (const key of ['wick.rpc.askTimeout', 'wick.worker.timeout', 'wick.deploy.recoveryMode']) {
    assert.match(actual, new RegExp(`\`${key.replace(/\./g, '\\.')}\``));
  }
});
