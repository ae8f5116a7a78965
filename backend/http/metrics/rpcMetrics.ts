import type { ConnectionStats } from '../../rpc/index.js';
import { gauge, type MetricDef } from './define.js';

/** The RpcEnv's connections, read when scraped. */
export function rpcMetricDefs<T>(
  source: 'master' | 'worker',
  rpc: (s: T) => ConnectionStats | undefined,
): MetricDef<T>[] {
  const read = (f: (c: ConnectionStats) => number) => (s: T) => {
    const c = rpc(s);
    return c === undefined ? [] : [{ value: f(c) }];
  };
  return [
    ...gauge<T>(
      source,
      'rpc_sockets',
      { help: 'Open sockets of its RPC port, handshaking ones included' },
      read((c) => c.sockets),
    ),
    ...gauge<T>(
      source,
      'rpc_connections',
      { help: 'Open RPC connections by who opened them', labels: ['direction'] },
      (s) => {
        const c = rpc(s);
        return c === undefined
          ? []
          : [
              { labels: { direction: 'inbound' }, value: c.inbound },
              { labels: { direction: 'outbound' }, value: c.outbound },
            ];
      },
    ),
    ...gauge<T>(
      source,
      'rpc_peers',
      { help: 'Peers with an open RPC connection' },
      read((c) => c.peers),
    ),
  ];
}
