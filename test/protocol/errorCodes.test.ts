/**
 * The Errors table of docs/protocol.md against backend/protocol/errors.ts: a peer written from
 * the docs must be able to tell every code Wick sends, so a code added in the code and not in the
 * table (as -32021 once was) fails here, and so does a row for a code the code no longer has.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { RpcErrorCode } from '../../backend/protocol/errors.js';

/** The rows of the table under "## Errors": code (written with U+2212 or "-") → name. */
function documentedCodes(): Map<number, string> {
  const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
  const start = doc.indexOf('\n## Errors\n');
  assert.ok(start >= 0, 'docs/protocol.md has no "## Errors" section');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const rows = new Map<number, string>();
  for (const m of section.matchAll(/^\| [−-](\d+) \| (\w+) \|/gm)) {
    rows.set(-Number(m[1]), m[2] as string);
  }
  return rows;
}

test('every error code of backend/protocol/errors.ts is in the Errors table of docs/protocol.md, under its name', () => {
  const rows = documentedCodes();
  const missing = Object.entries(RpcErrorCode)
    .filter(([name, code]) => rows.get(code) !== name)
    .map(([name, code]) => `${code} ${name} (the table has ${rows.get(code) ?? 'no row'})`);
  assert.deepEqual(missing, [], 'add these to the table in docs/protocol.md, "## Errors"');
});

test('the Errors table lists no code that backend/protocol/errors.ts does not have', () => {
  const known = new Set<number>(Object.values(RpcErrorCode));
  const extra = [...documentedCodes()].filter(([code]) => !known.has(code));
  assert.deepEqual(extra, []);
});
