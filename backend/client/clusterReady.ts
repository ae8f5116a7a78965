import type { WickConf } from '../conf/WickConf.js';
import { MasterStateMirror } from './MasterStateMirror.js';
import { allMasterStates, withMaster } from './masterConnection.js';

/**
 * What `wick local-cluster` waits for, on top of the cluster client (backend/client/): its
 * workers to register, and (with standby masters) one master to lead.
 */

/** Resolves once `count` workers are ALIVE, from pushed state; reports the count as it changes. */
export async function waitForWorkers(
  masterUrl: string,
  count: number,
  progress: (alive: number) => void,
  conf?: WickConf,
): Promise<void> {
  await withMaster(
    masterUrl,
    async (master, env) => {
      const mirror = new MasterStateMirror();
      env.setupEndpoint('StateMirror', mirror);
      let last = -1;
      const alive = (s: { workers: { state: string }[] }) =>
        s.workers.filter((w) => w.state === 'ALIVE').length;
      mirror.onChange((s) => {
        const n = alive(s);
        if (n !== last) progress(n);
        last = n;
      });
      await mirror.subscribe(master);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `Only ${last} of ${count} workers registered within 60 s; see the daemon logs`,
              ),
            ),
          60_000,
        );
      });
      try {
        await Promise.race([mirror.waitFor((s) => alive(s) >= count), timeout]);
      } finally {
        clearTimeout(timer);
        mirror.unsubscribe(master);
      }
    },
    conf,
  );
}

/** Waits until one of the masters is ALIVE (elected, recovered), and returns its URLs. */
export async function leaderOf(
  masterUrl: string,
  timeoutMs: number,
  conf?: WickConf,
): Promise<{ url: string; webUiUrl: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await allMasterStates(masterUrl, conf);
    const alive = statuses.find((s) => s.state?.status === 'ALIVE');
    if (alive?.state) return { url: alive.url, webUiUrl: alive.state.webUiUrl };
    if (Date.now() > deadline) {
      const seen = statuses.map((s) => `${s.url}: ${s.state?.status ?? s.error}`).join('; ');
      throw new Error(`No master became leader within ${timeoutMs / 1000} s (${seen})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
