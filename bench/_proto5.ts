import { spawn } from 'node:child_process';
import { stopAll } from './lib/process.js';
import { startCluster, waitForIdleCluster } from './lib/wickApp.js';
const c = await startCluster();
try {
  for (let i = 0; i < 2; i++) {
    await waitForIdleCluster(c.ready.url);
    const t = performance.now();
    const child = spawn(process.execPath, ['bin/wick.js', 'submit', '--master', c.ready.url, 'examples/pi.ts', process.env.SLICES ?? '1000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; const now = (performance.now() - t).toFixed(0); for (const l of String(d).split('\n')) if (l) console.log(now, l.slice(0, 140)); });
    child.stdout.on('data', (d) => console.log((performance.now() - t).toFixed(0), String(d).trim()));
    await new Promise((r) => child.on('exit', r));
    console.log('e2e ms', (performance.now() - t).toFixed(0));
  }
  let t = performance.now(); let cnt = 0; const n = 1e8;
  for (let i = 1; i < n; i++) { const x = Math.random() * 2 - 1; const y = Math.random() * 2 - 1; cnt += x * x + y * y <= 1 ? 1 : 0; }
  console.log('single ms', (performance.now() - t).toFixed(0), cnt);
} finally { await stopAll(); }
