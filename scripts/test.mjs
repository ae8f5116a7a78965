#!/usr/bin/env node
// Runs every test file under test/ (or the ones named) with node's test runner and tsx.
// Usage: npm test [-- test/rpc/Inbox.test.ts ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'fixtures' ? [] : find(p);
    return /\.test\.ts$/.test(name) ? [p] : [];
  });
}

const named = process.argv.slice(2);
const files = named.length > 0 ? named : find('test').sort();
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-timeout=180000',
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
