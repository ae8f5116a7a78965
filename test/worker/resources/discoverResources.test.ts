/**
 * A worker's resource discovery: real scripts written by the test (run as the worker runs them),
 * and each kind of bad output refused with the script's name and what was expected.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { discoverWorkerResources } from '../../../backend/worker/resources/discoverResources.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-discovery-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function script(body: string): string {
  const p = join(dir, `discover-${n++}.sh`);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const conf = (amount: string, s?: string) =>
  new WickConf({
    'spark.worker.resource.gpu.amount': amount,
    ...(s ? { 'spark.worker.resource.gpu.discoveryScript': s } : {}),
  });

test('a script printing Spark’s ResourceInformation gives every address it prints', async () => {
  const s = script(`echo '{"name":"gpu","addresses":["0","1","2"]}'`);
  assert.deepEqual(await discoverWorkerResources(conf('2', s)), { gpu: ['0', '1', '2'] });
  assert.deepEqual(await discoverWorkerResources(new WickConf()), {});
});

test('bad output, a wrong name, too few addresses, a failing script: each named', async () => {
  const cases: [string, RegExp][] = [
    [
      `echo 'gpu0 gpu1'`,
      /printed 'gpu0 gpu1', which is not JSON; expected one JSON object such as \{"name":"gpu"/,
    ],
    [`echo '{"name":"gpu","addresses":[0,1]}'`, /\/addresses\/0.*expected one JSON object/],
    [`echo '{"name":"gpu","addresses":["0","0"]}'`, /none twice/],
    [
      `echo '{"name":"fpga","addresses":["0"]}'`,
      /printed resource name 'fpga' but 'gpu' was expected/,
    ],
    [
      `echo '{"name":"gpu","addresses":["0"]}'`,
      /found 1 address \(0\) but wick\.worker\.resource\.gpu\.amount asks for 2/,
    ],
    [`echo nope >&2; exit 3`, /failed: it exited with status 3; its stderr: nope/],
  ];
  for (const [body, expected] of cases) {
    const s = script(body);
    await assert.rejects(discoverWorkerResources(conf('2', s)), (err: Error) => {
      assert.match(err.message, new RegExp(s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
      assert.match(err.message, expected);
      return true;
    });
  }
  await assert.rejects(
    discoverWorkerResources(conf('2', join(dir, 'missing.sh'))),
    /could not be run \(ENOENT/,
  );
  await assert.rejects(
    discoverWorkerResources(conf('2')),
    /set wick\.worker\.resource\.gpu\.discoveryScript/,
  );
  await assert.rejects(
    discoverWorkerResources(conf('two', script('true'))),
    /'two' is not an amount/,
  );
});
