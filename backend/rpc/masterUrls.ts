import { RpcAddress } from './RpcAddress.js';
import { noteMasterAddress } from './tls/WireSecurity.js';

/** `wick://` or Spark's `spark://`, before one master or each of a list. */
const SCHEME = /^(?:wick|spark):\/\//;

const EXPECTED = 'expected wick://host:port[,host:port…] or spark://host:port[,host:port…]';

/**
 * Parses `wick://h1:7077,h2:7077` (or Spark's `spark://h1:7077,h2:7077`, or `h1:7077,h2:7077`)
 * into host:port addresses.
 */
export function parseMasterUrls(spec: string): string[] {
  const body = spec.trim().replace(SCHEME, '');
  const parts = body.split(',').map((p) => p.trim().replace(SCHEME, '').replace(/\/+$/, ''));
  if (parts.length === 0 || parts.some((p) => p === '')) {
    throw new Error(`Invalid master URL "${spec}": ${EXPECTED}`);
  }
  return parts.map((p) => {
    let address: string;
    try {
      address = RpcAddress.parse(p).hostPort;
    } catch {
      throw new Error(`Invalid master URL "${spec}": "${p}" is not host:port; ${EXPECTED}`);
    }
    // A master's address: dialling it checks the fingerprints this process pins (wick.ssl.*).
    noteMasterAddress(address);
    return address;
  });
}
