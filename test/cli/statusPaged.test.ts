/**
 * `wick status` on a cluster whose state is larger than one frame: a real master with 5,000
 * workers registered by raw RegisterWorker frames (each a socket, its fields as long as the
 * protocol allows), and the real CLI. The master's frame limit is cut to 8 MiB here, so that the
 * whole state (over 14 MB) cannot travel as one reply while each page (about 4 MiB) can: the CLI
 * lists every worker only if it reads the pages.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { MAX_STATE_PAGE_ENTRIES } from '../../backend/protocol/bounds.js';
import { RpcErrorCode } from '../../backend/rpc/index.js';
import { assertBuilt, runWick } from '../helpers/cli.js';
import { startMaster } from '../helpers/cluster.js';
import { OPEN, openCliEnv, registerFakeWorkers } from '../helpers/fakeWorkers.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { RawClient } from '../helpers/peer.js';

before(assertBuilt);
checkNothingLeftRunning();

const WORKERS = 5_000;

test('wick status lists 5,000 workers whose state is more than a frame, page by page', {
  timeout: 240_000,
}, async (t) => {
  const cli = openCliEnv(t);
  const master = await startMaster(t, {
    conf: { ...OPEN, 'wick.rpc.message.maxSize': '8m', 'wick.worker.timeout': '1h' },
  });
  const started = performance.now();
  const workers = await registerFakeWorkers(t, master.address, WORKERS);
  t.diagnostic(`${WORKERS} workers registered in ${Math.round(performance.now() - started)} ms`);

  // The whole state in one reply is over the frame limit: the master refuses to send it.
  const raw = await RawClient.connect(master.address, t);
  await raw.hello('client-whole');
  const whole = await raw.ask('client-whole', 'Master', { type: 'RequestMasterState' });
  assert.equal(whole.error?.code, RpcErrorCode.FrameTooLarge, JSON.stringify(whole).slice(0, 300));
  t.diagnostic(`whole state refused: ${whole.error?.message}`);

  // One page holds as many entries as fit in about 4 MiB.
  const first = await raw.ask('client-whole', 'Master', {
    type: 'RequestMasterState',
    limit: MAX_STATE_PAGE_ENTRIES,
  });
  const page = first.result as { workers: unknown[]; next?: string };
  assert.ok(page.next, 'more pages follow');
  assert.ok(page.workers.length > 0 && page.workers.length < WORKERS);
  t.diagnostic(`first page: ${page.workers.length} workers, ${JSON.stringify(first).length} bytes`);

  for (const json of [false, true]) {
    const t0 = performance.now();
    const r = await runWick(['status', '--master', master.url, ...(json ? ['--json'] : [])], {
      env: cli,
    });
    const ms = Math.round(performance.now() - t0);
    assert.equal(r.code, 0, r.stderr);
    t.diagnostic(`wick status${json ? ' --json' : ''}: ${ms} ms, ${r.stdout.length} bytes out`);
    if (json) {
      const listed = JSON.parse(r.stdout) as { workers: { id: string }[]; aliveworkers: number };
      assert.equal(listed.workers.length, WORKERS);
      assert.deepEqual(new Set(listed.workers.map((w) => w.id)), new Set(workers.map((w) => w.id)));
    } else {
      assert.match(r.stdout, new RegExp(`Workers: ${WORKERS} alive of ${WORKERS}`));
      for (const w of workers) assert.ok(r.stdout.includes(w.id), `${w.id} not listed`);
    }
  }
});
