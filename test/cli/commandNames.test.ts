/** Which bundle runs a command (dist/wick.cjs asks cliBundleOf), and what the commands' own hold. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { cliBundleOf } from '../../backend/cli/commandNames.js';
import { distFile } from '../../backend/util/paths.js';
import { assertBuilt } from '../helpers/cli.js';

before(assertBuilt);

test('each command runs from its own bundle where it has one, every other from main.cjs', () => {
  assert.equal(cliBundleOf('submit'), 'submit.cjs');
  assert.equal(cliBundleOf('executor'), 'executor.cjs');
  assert.equal(cliBundleOf('executor-standby'), 'executor.cjs');
  assert.equal(cliBundleOf('driver-wrapper'), 'driver-wrapper.cjs');
  assert.equal(cliBundleOf('master'), 'main.cjs');
  assert.equal(cliBundleOf('status'), 'main.cjs');
  assert.equal(cliBundleOf('other'), 'main.cjs');
});

test("a command's own bundle holds its code and not the other commands'", () => {
  const main = readFileSync(distFile('cli/main.cjs'), 'utf8');
  const executor = readFileSync(distFile(`cli/${cliBundleOf('executor')}`), 'utf8');
  for (const bundle of [main, executor])
    assert.match(bundle, /\bCoarseGrainedExecutorBackend = class\b/);
  assert.match(main, /\bMaster = class\b/);
  assert.doesNotMatch(executor, /\bMaster = class\b/, 'no master in the executor bundle');
  assert.ok(executor.length < main.length / 2, `${executor.length} of ${main.length} bytes`);
});
