import { Worker } from 'node:worker_threads';

/**
 * What a debugger shows as the Module scope where this thread stops next: `pause` must run a
 * `debugger` statement inside an ES module. A worker thread attaches to this thread's inspector
 * (as VS Code's js-debug attaches to a driver's), reads the scope's variables when the thread
 * pauses — the same CDP calls js-debug makes for its Variables view — and lets it go on.
 */
export async function moduleScopeAt(pause: () => void): Promise<string[]> {
  const worker = new Worker(INSPECTING_THREAD, { eval: true });
  try {
    const messages: Record<string, unknown>[] = [];
    let waiting: ((m: Record<string, unknown>) => void) | undefined;
    worker.on('message', (m: Record<string, unknown>) => {
      if (waiting) waiting(m);
      else messages.push(m);
    });
    const failed = new Promise<never>((_, reject) => worker.once('error', reject));
    const next = () =>
      Promise.race([
        failed,
        new Promise<Record<string, unknown>>((resolve) => {
          const queued = messages.shift();
          if (queued) resolve(queued);
          else
            waiting = (m) => {
              waiting = undefined;
              resolve(m);
            };
        }),
      ]);
    const ready = await next();
    if (!ready.ready)
      throw new Error(`the inspecting thread did not start: ${JSON.stringify(ready)}`);
    pause();
    const seen = await next();
    if (seen.error) throw new Error(`reading the scope failed: ${seen.error}`);
    if (!Array.isArray(seen.names))
      throw new Error(`the thread never paused: ${JSON.stringify(seen)}`);
    return seen.names as string[];
  } finally {
    await worker.terminate();
  }
}

const INSPECTING_THREAD = `
const { parentPort } = require('node:worker_threads');
const inspector = require('node:inspector');
const s = new inspector.Session();
s.connectToMainThread();
// The session holds no handle: without this the thread would end before the first reply.
setInterval(() => {}, 1 << 30);
const post = (method, params) =>
  new Promise((resolve, reject) => s.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
s.on('Debugger.paused', async ({ params }) => {
  try {
    const frame = params.callFrames[0];
    const scope = frame.scopeChain.find((x) => x.type === 'module');
    if (!scope) throw new Error('no module scope in ' + frame.scopeChain.map((x) => x.type));
    const { result } = await post('Runtime.getProperties', {
      objectId: scope.object.objectId,
      ownProperties: true,
    });
    parentPort.postMessage({ names: result.map((p) => p.name) });
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.stack || e) });
  }
  await post('Debugger.resume', {});
});
post('Debugger.enable', {}).then(() => parentPort.postMessage({ ready: true }));
`;
