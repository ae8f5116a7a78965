/**
 * Names that two processes share live once, in protocol/ (docs/architecture.md): the endpoint
 * names a peer reaches and the environment a worker gives the processes it starts. Written again
 * as a bare string elsewhere in backend/, the two copies would drift apart unseen.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import * as childEnv from '../../backend/protocol/childEnv.js';
import * as endpoints from '../../backend/protocol/endpoints.js';

const root = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

test('no endpoint name or child environment variable is written as a string outside protocol/', () => {
  const envNames = Object.values(childEnv) as string[];
  // EXECUTOR_ENDPOINT ('Executor') is left out: the word names loggers and log lines too.
  const endpointNames = [endpoints.DRIVER_ENDPOINT, endpoints.WORKER_WATCHER_ENDPOINT];
  assert.ok(envNames.length >= 7);
  const found: string[] = [];
  for (const file of sources(join(root, 'backend'))) {
    const rel = relative(root, file);
    if (rel.startsWith('backend/protocol/')) continue;
    const text = readFileSync(file, 'utf8');
    for (const name of [...envNames, ...endpointNames]) {
      const written =
        text.includes(`'${name}'`) ||
        text.includes(`"${name}"`) ||
        // An environment variable read or set by its name (process.env.X, { X: … }).
        (envNames.includes(name) && new RegExp(`(\\.${name}\\b|\\b${name}:)`).test(text));
      if (written) found.push(`${rel}: ${name}`);
    }
  }
  assert.deepEqual(found, [], 'import these names from backend/protocol/ instead');
});
