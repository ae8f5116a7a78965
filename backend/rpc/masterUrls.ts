import { RpcAddress } from './RpcAddress.js';

/** Parses `wick://h1:7077,h2:7077` (or `h1:7077,h2:7077`) into host:port addresses. */
export function parseMasterUrls(spec: string): string[] {
  const body = spec.trim().replace(/^wick:\/\//, '');
  const parts = body.split(',').map((p) =>
    p
      .trim()
      .replace(/^wick:\/\//, '')
      .replace(/\/+$/, ''),
  );
  if (parts.length === 0 || parts.some((p) => p === '')) {
    throw new Error(`Invalid master URL "${spec}": expected wick://host:port[,host:port…]`);
  }
  return parts.map((p) => {
    try {
      return RpcAddress.parse(p).hostPort;
    } catch {
      throw new Error(
        `Invalid master URL "${spec}": "${p}" is not host:port (expected wick://host:port[,host:port…])`,
      );
    }
  });
}
