/**
 * The MapStatus of docs/protocol.md against the code: the worked example in "Shuffles" is what
 * Wick's own map task returns for those records (sizes, CRC-32s, records), it and the task's
 * output pass the generated schema (docs/protocol/structures/MapStatus.schema.json), and that
 * schema explains every field.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { TaskPlace } from '../../backend/app/task/compile.js';
import { shuffleWriter } from '../../backend/app/task/shuffleWrite.js';
import { MapStatus } from '../../backend/protocol/shuffle.js';
import type { PartitionAction, TaskDescription } from '../../backend/protocol/task.js';

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
const schemaFile = new URL('../../docs/protocol/structures/MapStatus.schema.json', import.meta.url);
const root = mkdtempSync(join(tmpdir(), 'wick-test-mapstatus-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** The JSON example after "a map task of 3 reducers" in docs/protocol.md. */
function documentedExample(): Record<string, unknown> {
  const at = doc.search(/a map\s+task of 3 reducers/);
  assert.ok(at >= 0, 'docs/protocol.md lost its MapStatus example');
  const m = /```json\n(.+)\n```/.exec(doc.slice(at));
  assert.ok(m, 'no ```json block after the MapStatus example');
  return JSON.parse(m[1] as string) as Record<string, unknown>;
}

test("the docs' MapStatus example is what Wick's map task returns for its records", async () => {
  const example = documentedExample();
  const place: TaskPlace = {
    appDir: root,
    shuffleDir: join(root, 'blockmgr-1'),
    shuffleLocation: example.location as string,
    executorId: example.executorId as string,
  };
  // "a" to reducer 0, nothing to 1, "b" and "c" to 2 (the keys above no bound, or both).
  const action = {
    kind: 'shuffleWrite',
    shuffleId: 0,
    numPartitions: 3,
    partitioner: { kind: 'range', bounds: ['a', 'a1'], ascending: true },
  } as Extract<PartitionAction, { kind: 'shuffleWrite' }>;
  const w = shuffleWriter(action, { taskId: 0, partition: 0 } as TaskDescription, place, () => {
    throw new Error('no function here');
  });
  for (const r of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ])
    w.push(r);
  assert.deepEqual(await w.result(), example);
});

test('the MapStatus schema under docs/ passes the example, explains every field, and refuses extra fields', () => {
  const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as {
    properties: Record<string, { description?: string }>;
    additionalProperties: boolean;
  };
  assert.equal(schema.additionalProperties, false);
  const unexplained = Object.entries(schema.properties)
    .filter(([, p]) => !p.description)
    .map(([name]) => name);
  assert.deepEqual(unexplained, [], 'every MapStatus field needs a description');
  assert.deepEqual(Object.keys(schema.properties), Object.keys(MapStatus.properties));
  assert.ok(Value.Check(MapStatus, documentedExample()));
  assert.ok(!Value.Check(MapStatus, { ...documentedExample(), extra: 1 }));
});
