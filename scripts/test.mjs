#!/usr/bin/env node
// Runs every test file under test/ (or the ones named) with node's test runner and tsx.
// Usage: npm test [-- test/rpc/Inbox.test.ts ...]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'fixtures' ? [] : find(p);
    return /\.test\.ts$/.test(name) ? [p] : [];
  });
}

const named = process.argv.slice(2);
// What Wick keeps in the user's cache (compiled apps, a master's cluster-mode files) goes to a
// folder of this run instead, removed at its end.
const cache = mkdtempSync(join(tmpdir(), 'wick-test-cache-'));
process.env.XDG_CACHE_HOME = cache;
// And what it keeps in the user's state dir: the event logs a local cluster's applications write
// by default (docs/history.md).
process.env.XDG_STATE_HOME = join(cache, 'state');
// And the cluster secret a master generates on first start (its default secret file): each test
// file gets a config folder of its own there (test/helpers/configPerFile.mjs), shared by the
// processes it starts, as those of one user's machine share theirs.
delete process.env.WICK_AUTH_SECRET;
// The files a test writes for its applications' tasks to read (gates, inputs; test/helpers/apps.ts
// AppDir) go under one folder that every worker of the run shows its confined executors,
// read-only (wick.executor.sandbox.readOnlyPaths): the rest of /tmp they do not see.
const shared = mkdtempSync(join(tmpdir(), 'wick-test-shared-'));
process.env.WICK_TEST_SHARED_DIR = shared;
process.env.WICK_EXECUTOR_SANDBOX_READ_ONLY_PATHS = shared;
// Most tests' applications read inputs their test wrote anywhere under /tmp, which a confined
// executor does not see: the run's workers confine only where a test asks (test/security/
// sandbox.test.ts, test/examples/python-pi.test.ts run bwrap), as a setting of lower precedence
// than any --conf. Users' workers confine by default (wick.executor.sandbox=auto).
process.env.WICK_EXECUTOR_SANDBOX ??= 'none';
const files = named.length > 0 ? named : find('test').sort();
// The runner and so every test file's process (its children inherit these --imports).
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--import',
    './test/helpers/configPerFile.mjs',
    join(import.meta.dirname, 'testRunner.mjs'),
    ...files,
  ],
  { stdio: 'inherit' },
);
rmSync(cache, { recursive: true, force: true });
rmSync(shared, { recursive: true, force: true });
process.exit(r.status ?? 1);
