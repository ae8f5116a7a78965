/**
 * Which address a driver tells its executors to connect to, and which it binds (Spark's
 * spark.driver.host and spark.driver.bindAddress).
 *
 * With no setting, the driver advertises the address its machine uses to reach the master: the
 * workers reach the master, so they are on a network where that address is likely reachable too,
 * and it is loopback only when the master is on loopback (a local cluster). Spark advertises the
 * host name instead, which works only when every worker resolves it to the same address — a common
 * cause of executors that cannot find their driver; an address needs no resolver on the workers.
 *
 * The driver binds the address it advertises, not 0.0.0.0: that is all its executors need, and it
 * does not expose the driver on the machine's other networks. A driver behind NAT or a tunnel,
 * whose advertised address is not its own, sets wick.driver.bindAddress (e.g. 0.0.0.0).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { RpcAddress } from '../../rpc/index.js';

export interface DriverAddressSettings {
  /** wick.driver.host; '' when unset. */
  host: string;
  /** wick.driver.bindAddress; '' when unset. */
  bindAddress: string;
}

export interface DriverAddress {
  /** Put in the driver's URL for executors. */
  advertise: string;
  /** What the driver's RpcEnv listens on. */
  bind: string;
  /** Where `advertise` came from, for the log. */
  reason: string;
}

/**
 * The choice, given the local address of this machine's route to the first master that has one
 * (undefined when no master address resolves).
 */
export function chooseDriverAddress(
  settings: DriverAddressSettings,
  towardsMaster: { master: string; local: string } | undefined,
): DriverAddress {
  const bind = (advertise: string) => settings.bindAddress || advertise;
  if (settings.host) {
    return { advertise: settings.host, bind: bind(settings.host), reason: 'wick.driver.host' };
  }
  if (towardsMaster) {
    return {
      advertise: towardsMaster.local,
      bind: bind(towardsMaster.local),
      reason: `the local address of the route to the master ${towardsMaster.master}`,
    };
  }
  return {
    advertise: '127.0.0.1',
    bind: bind('127.0.0.1'),
    reason: 'no master address resolved, so loopback',
  };
}

/**
 * The local address this machine would use to reach `hostPort` (a connected UDP socket: the
 * kernel picks the route and the source address, and no packet is sent, so the master sees
 * nothing). Undefined when the host does not resolve or no route leads to it.
 */
export async function localAddressTowards(hostPort: string): Promise<string | undefined> {
  const { host, port } = RpcAddress.parse(hostPort);
  const families: Array<'udp4' | 'udp6'> = net.isIPv6(host) ? ['udp6'] : ['udp4', 'udp6'];
  for (const family of families) {
    const local = await new Promise<string | undefined>((resolve) => {
      const socket = dgram.createSocket(family);
      const done = (address: string | undefined) => {
        socket.close();
        resolve(address);
      };
      socket.once('error', () => done(undefined));
      // A failed lookup comes to this callback, not to 'error'.
      socket.connect(port, host, (err?: Error) => {
        const local = err ? undefined : socket.address().address;
        done(local === '0.0.0.0' || local === '::' ? undefined : local);
      });
    });
    if (local) return local;
  }
  return undefined;
}

/** The first master, in order, that this machine has a route to, with the local address of it. */
export async function routeToMasters(
  masters: readonly string[],
): Promise<{ master: string; local: string } | undefined> {
  for (const master of masters) {
    const local = await localAddressTowards(master);
    if (local) return { master, local };
  }
  return undefined;
}
