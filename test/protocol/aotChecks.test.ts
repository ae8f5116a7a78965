/**
 * The protocol's validators compiled ahead of time (backend/protocol/aotChecksModule.ts): the
 * module the build puts in the bundles has a check for every message type and the RPC layer's own
 * structures, each accepting and refusing exactly what TypeCompiler.Compile's check of the same
 * schema does; and the built bundles carry it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import type { CheckFactory } from '../../backend/protocol/aotChecks.js';
import { aotChecksModule, aotSchemas } from '../../backend/protocol/aotChecksModule.js';
import { aotCheck } from '../../backend/protocol/compiledCheck.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { assertBuilt, repoRoot } from '../helpers/cli.js';

/** The generated module, imported as a bundle would run it. */
async function generated(): Promise<Record<string, CheckFactory>> {
  const dir = mkdtempSync(join(tmpdir(), 'wick-aot-'));
  try {
    const file = join(dir, 'aotChecks.mjs');
    writeFileSync(file, aotChecksModule());
    return (await import(pathToFileURL(file).href)).aotChecks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Values to try a schema's checks on: a valid one when TypeBox can make it, that one with each
 * field given a value of other types and with an extra field, and values of the wrong shape.
 */
function samples(schema: TSchema): unknown[] {
  const out: unknown[] = [undefined, null, 0, -1, 1.5, 'x', '', true, [], {}, [{}]];
  let valid: unknown;
  try {
    valid = Value.Create(schema);
  } catch {
    return out;
  }
  out.push(valid);
  if (valid && typeof valid === 'object' && !Array.isArray(valid)) {
    const v = valid as Record<string, unknown>;
    out.push({ ...v, extra: 1 });
    for (const key of Object.keys(v)) {
      for (const other of [null, 'x', -1, 2 ** 53, 1.5, {}, [], true, 'x'.repeat(5000)]) {
        out.push({ ...v, [key]: other });
      }
      const { [key]: _, ...without } = v;
      out.push(without);
    }
  }
  return out;
}

test('a check is generated for every message type and for the RPC layer’s envelope and handshake', () => {
  const names = [...aotSchemas().keys()];
  for (const def of wickProtocol.all()) assert.ok(names.includes(def.type), def.type);
  for (const name of ['rpc.Envelope', 'rpc.HelloParams', 'rpc.HelloResult', 'rpc.AuthParams'])
    assert.ok(names.includes(name), name);
  const text = aotChecksModule();
  for (const name of names)
    assert.ok(text.includes(`${JSON.stringify(name)}: function (kind, format, hash)`), name);
});

test('each generated check accepts and refuses what TypeCompiler.Compile’s check does', async () => {
  const factories = await generated();
  let compared = 0;
  let validSeen = 0;
  for (const [name, schema] of aotSchemas()) {
    const factory = factories[name];
    assert.ok(factory, `no generated check for ${name}`);
    const ahead = aotCheck(schema, factory);
    const now = TypeCompiler.Compile(schema);
    for (const value of samples(schema)) {
      const expected = now.Check(value);
      if (expected) validSeen++;
      assert.equal(
        ahead.Check(value),
        expected,
        `${name}: ${JSON.stringify(value)?.slice(0, 200)}`,
      );
      compared++;
    }
    // Errors() reads the schema: the same first error either way.
    assert.deepEqual(ahead.Errors({}).First()?.path, now.Errors({}).First()?.path, name);
  }
  // The samples reach both answers: many valid values, and far more refused ones.
  assert.ok(validSeen >= 50, `valid samples: ${validSeen}`);
  assert.ok(compared > 2000, `values compared: ${compared}`);
});

test('the built bundles carry the generated checks in place of the empty module', () => {
  assertBuilt();
  for (const bundle of ['cli/executor.cjs', 'cli/submit.cjs', 'cli/main.cjs', 'wick-lib.cjs']) {
    const text = readFileSync(join(repoRoot, 'dist', bundle), 'latin1');
    // TypeBox's code for the message (it exists nowhere else in a bundle), and the envelope's
    // entry, whose quoted key esbuild keeps.
    assert.ok(text.includes('function check_LaunchTask(value)'), `${bundle}: no LaunchTask check`);
    assert.ok(text.includes('"rpc.Envelope": '), `${bundle}: no envelope check`);
  }
});
