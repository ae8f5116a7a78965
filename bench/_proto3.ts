import { startServer, stopAll } from './lib/process.js';
import { RawTaskDriver } from './lib/rawTaskDriver.js';

const d = await RawTaskDriver.listen();
try {
  await Promise.all(
    [0, 1].map((i) =>
      startServer('bench/lib/rawTaskExecutor.ts', { args: [String(d.port), String(i)] }),
    ),
  );
  await d.waitForExecutors(2);
  for (const inflight of [1, 1, 2, 4, 8, 1]) {
    const n = 100000;
    const t = performance.now();
    await d.run(n, inflight);
    const ms = performance.now() - t;
    console.log('inflight', inflight, ((n / ms) * 1000).toFixed(0), '/s');
  }
} finally {
  await d.close();
  await stopAll();
}
