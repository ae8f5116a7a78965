/**
 * Addresses of RpcEnvs and endpoints. A listening env is `host:port` (IPv6 hosts in brackets);
 * a client-mode env has no port anyone can dial and goes by `client-<id>`. An endpoint's URI is
 * `wick://host:port/Name`, as Spark's `spark://host:port/Name`.
 */
export class RpcAddress {
  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  get hostPort(): string {
    return this.host.includes(':') ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`;
  }

  toString(): string {
    return this.hostPort;
  }

  toWickURL(): string {
    return `wick://${this.hostPort}`;
  }

  /** Parses `host:port` or `[v6]:port`; throws a message naming the value. */
  static parse(hostPort: string): RpcAddress {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/\s[\]]+)):(\d{1,5})$/.exec(hostPort);
    const port = m ? Number(m[3]) : Number.NaN;
    if (!m || port < 1 || port > 65535) {
      throw new Error(
        `Invalid address "${hostPort}": expected host:port with a port from 1 to 65535`,
      );
    }
    return new RpcAddress((m[1] ?? m[2]) as string, port);
  }
}

export const CLIENT_PREFIX = 'client-';

/** A client id never holds a ':', so a host that happens to be named `client-…` still dials. */
export function isClientAddress(address: string): boolean {
  return address.startsWith(CLIENT_PREFIX) && !address.includes(':');
}

/** `wick://host:port/Name` → its address and name. */
export function parseEndpointURI(uri: string): { address: RpcAddress; name: string } {
  const m = /^wick:\/\/([^/]+)\/([^/\s]+)$/.exec(uri);
  let name: string | undefined;
  try {
    name = m ? decodeURIComponent(m[2] as string) : undefined;
  } catch {
    // A malformed %-escape: fall through to the error that names the URI.
  }
  if (!m || name === undefined) {
    throw new Error(`Invalid endpoint URI "${uri}": expected wick://host:port/Name`);
  }
  return { address: RpcAddress.parse(m[1] as string), name };
}

export function endpointURI(address: string, name: string): string {
  return `wick://${address}/${encodeURIComponent(name)}`;
}
