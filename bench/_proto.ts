import { setLogLevel } from '../backend/util/log.js';
import { stopAll } from './lib/process.js';
import { connect, startCluster } from './lib/wickApp.js';

setLogLevel('WARN');
const c = await startCluster();
console.log(c.ready);
try {
  let t = performance.now();
  const wc = await connect(c.ready.url, 'proto', 2);
  console.log('connect ms', performance.now() - t);
  for (const n of [1000, 5000, 20000, 20000]) {
    t = performance.now();
    await wc.range(0, n, 1, n).foreach(() => {});
    const ms = performance.now() - t;
    console.log(n, 'tasks', ms.toFixed(0), 'ms', ((n / ms) * 1000).toFixed(0), '/s');
  }
  await wc.stop();
} finally {
  await stopAll();
}
