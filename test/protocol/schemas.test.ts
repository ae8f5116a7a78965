import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  CATALOGUE_BEGIN,
  CATALOGUE_END,
  checkProtocolDocs,
  formatReport,
  renderSchemaFiles,
  writeProtocolDocs,
} from '../../scripts/gen-schemas.js';
// Loaded on purpose: test-only messages must never reach docs/protocol/.
import '../fixtures/testMessages.js';

test('docs/protocol/ and the catalogue in docs/protocol.md match backend/protocol/', () => {
  const report = checkProtocolDocs();
  assert.ok(report.ok, formatReport(report));
});

test('every message type, wire structure and structure inside messages gets a schema; test messages do not', () => {
  const files = [...renderSchemaFiles().keys()];
  for (const f of [
    'docs/protocol/messages/Ping.schema.json',
    'docs/protocol/messages/CheckExistence.schema.json',
    'docs/protocol/wire/Envelope.schema.json',
    'docs/protocol/wire/HelloParams.schema.json',
    'docs/protocol/wire/HelloResult.schema.json',
    'docs/protocol/wire/AuthParams.schema.json',
    'docs/protocol/wire/EndpointRefData.schema.json',
    'docs/protocol/structures/MapStatus.schema.json',
    'docs/protocol/index.json',
  ]) {
    assert.ok(files.includes(f), `${f} is not generated`);
  }
  assert.deepEqual(
    files.filter((f) => f.includes('/Test')),
    [],
  );
});

test('the check reports stale, missing and extra files, and writing fixes all three', (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'wick-schemas-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'docs'));
  writeFileSync(
    path.join(root, 'docs/protocol.md'),
    `# Protocol\n\n${CATALOGUE_BEGIN}\n${CATALOGUE_END}\n`,
  );
  writeProtocolDocs(root);
  assert.ok(checkProtocolDocs(root).ok);
  const again = readFileSync(path.join(root, 'docs/protocol/messages/Ping.schema.json'), 'utf8');
  assert.ok(again.endsWith('}\n'));

  writeFileSync(path.join(root, 'docs/protocol/messages/Ping.schema.json'), '{}\n');
  unlinkSync(path.join(root, 'docs/protocol/messages/Pong.schema.json'));
  writeFileSync(path.join(root, 'docs/protocol/messages/Gone.schema.json'), '{}\n');
  const report = checkProtocolDocs(root);
  assert.equal(report.ok, false);
  assert.deepEqual(report.stale, ['docs/protocol/messages/Ping.schema.json']);
  assert.deepEqual(report.missing, ['docs/protocol/messages/Pong.schema.json']);
  assert.deepEqual(report.extra, ['docs/protocol/messages/Gone.schema.json']);
  assert.match(formatReport(report), /Run `npm run schemas`/);

  writeProtocolDocs(root);
  assert.ok(checkProtocolDocs(root).ok);
  assert.equal(
    readFileSync(path.join(root, 'docs/protocol/messages/Ping.schema.json'), 'utf8'),
    again,
  );
});

test('a docs/protocol.md without the catalogue markers is reported, not overwritten', (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'wick-schemas-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'docs'));
  writeFileSync(path.join(root, 'docs/protocol.md'), '# Protocol\n');
  const report = checkProtocolDocs(root);
  assert.equal(report.problems.length, 1);
  assert.match(report.problems[0] as string, /needs the lines/);
  assert.throws(() => writeProtocolDocs(root), /needs the lines/);
  assert.equal(readFileSync(path.join(root, 'docs/protocol.md'), 'utf8'), '# Protocol\n');
});
