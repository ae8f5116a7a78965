/**
 * A master's settings for these tests: it runs open (an explicit choice, loudly logged), since the
 * raw sockets here say wick.hello without a secret. The bounds are checked before any handler,
 * for a peer that authenticated as much as for one that need not.
 */
export const OPEN = { 'wick.authenticate': 'false' } as const;

/**
 * The environment of a CLI that talks to an open master: no cluster secret to find (the run's
 * default secret file, written by other tests' masters, would have it try to authenticate).
 */
export function openCliEnv(t: TestContext): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'wick-test-open-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { XDG_CONFIG_HOME: dir };
}

/**
 * Workers that are nothing but a socket: each a RawClient that says wick.hello and sends one
 * RegisterWorker, its fields as long as the protocol allows — what a peer out to fill a master
 * would send. They read (and drop) whatever the master sends them, and close with the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { MAX_HOST_LENGTH, MAX_ID_LENGTH, MAX_URL_LENGTH } from '../../backend/protocol/bounds.js';
import { RawClient } from './peer.js';

export interface FakeWorkerOptions {
  /** Tells these workers' ids and addresses apart from another set's. */
  tag?: string;
  cores?: number;
  memory?: number;
  /** Fields at their longest (default true), else short ones. */
  long?: boolean;
  /** Connections opened at once. */
  batch?: number;
}

export interface FakeWorker {
  client: RawClient;
  /** Its RpcEnv address (client-…), which the master sends to over this connection. */
  from: string;
  id: string;
}

/** Sends one endpoint message as a JSON-RPC notification (no reply expected). */
export function notify(
  client: RawClient,
  from: string,
  to: string,
  message: { type: string; [k: string]: unknown },
): Promise<void> {
  return client.send({ jsonrpc: '2.0', method: message.type, params: { to, from, message } });
}

/** A RegisterWorker for fake worker `i`, its strings at their bounds when `long`. */
export function registerWorkerMessage(i: number, from: string, tag: string, o: FakeWorkerOptions) {
  const long = o.long ?? true;
  const suffix = `-${tag}-${i}`;
  const host = long
    ? `h${i}-${'x'.repeat(MAX_HOST_LENGTH - 12)}`.slice(0, MAX_HOST_LENGTH)
    : `h${i}`;
  const id = long
    ? `worker-20000101000000-${'w'.repeat(MAX_ID_LENGTH)}`.slice(0, MAX_ID_LENGTH - suffix.length) +
      suffix
    : `worker-20000101000000${suffix}`;
  return {
    type: 'RegisterWorker',
    id,
    host,
    port: (i % 65_000) + 1,
    worker: { address: from, name: 'Worker' },
    cores: o.cores ?? 4,
    memory: o.memory ?? 4096,
    workerWebUiUrl: long ? `http://${'u'.repeat(MAX_URL_LENGTH - 7)}` : 'http://u',
    masterAddress: '127.0.0.1:7077',
  };
}

/**
 * Registers `n` fake workers with the master at `address`, each over its own connection, and
 * resolves once the master has answered every one (RegisteredWorker).
 */
export async function registerFakeWorkers(
  t: TestContext,
  address: string,
  n: number,
  o: FakeWorkerOptions = {},
): Promise<FakeWorker[]> {
  const tag = o.tag ?? 'fw';
  const workers: FakeWorker[] = [];
  const batch = o.batch ?? 200;
  for (let start = 0; start < n; start += batch) {
    const some = await Promise.all(
      Array.from({ length: Math.min(batch, n - start) }, async (_, k) => {
        const i = start + k;
        const client = await RawClient.connect(address, t);
        const from = `client-${tag}-${i}`;
        await client.hello(from);
        client.discard = true;
        const registered = new Promise<void>((resolve, reject) => {
          client.onFrame = (f) => {
            if (f.method === 'RegisteredWorker') resolve();
            if (f.method === 'RegisterWorkerFailed')
              reject(new Error(`worker ${i} refused: ${JSON.stringify(f.params)}`));
          };
          void client.closed.then(() => reject(new Error(`worker ${i}: the master hung up`)));
        });
        const message = registerWorkerMessage(i, from, tag, o);
        await notify(client, from, 'Master', message);
        await registered;
        return { client, from, id: message.id };
      }),
    );
    workers.push(...some);
  }
  return workers;
}

/** The VmRSS of a process in bytes (from /proc). */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kb * 1024;
}
