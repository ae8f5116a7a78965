import { setLogLevel } from '../backend/util/log.js';
import { stopAll } from './lib/process.js';
import { connect, driverOf, startCluster } from './lib/wickApp.js';
setLogLevel('WARN');
const c = await startCluster();
try {
  const wc = await connect(c.ready.url, 'proto', 2);
  const d = driverOf(wc) as any;
  const counts: Record<string, number> = {};
  const orig = d.receive.bind(d);
  d.receive = (m: any, s: any) => { if (m.state === 'FINISHED') counts[m.executorId] = (counts[m.executorId] ?? 0) + 1; return orig(m, s); };
  const iv = setInterval(() => console.log([...d.executors.values()].map((e: any) => `${e.id}: free ${e.freeCores} q ${e.queued}`).join(' | '), [...d.taskMs], counts), 500);
  for (let k = 0; k < 3; k++) {
  const n0 = 10000;
  const t = performance.now();
  await wc.range(0, n0, 1, n0).foreach(() => {});
  console.log(n0 / (performance.now() - t) * 1000, counts);
  }
  clearInterval(iv);
  await wc.stop();
} finally { await stopAll(); }
