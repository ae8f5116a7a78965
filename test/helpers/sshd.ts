/**
 * An sshd per simulated host (TOOLCHAIN.md, "Several hosts on one machine"), so that `ssh` reaches
 * a host as start-all-style scripts need. One key pair for the client, one host key, written with
 * ssh-keygen -N '' into a folder under /var/tmp: every host sees it (each host's /tmp is its own).
 * Each sshd runs in the foreground (-D) as a process of the harness, stopped at its cleanup.
 * `SetEnv` gives the sessions of each host what its own machine's environment would hold (as a
 * spark-env.sh on each host does): a simulated host shares this machine's host name, so a worker
 * there is told its address.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Host, HostProcess } from './hosts.js';

export interface SshKeys {
  /** The folder of the keys, the known_hosts file and the sshd configs. */
  dir: string;
  /** The client's private key (its public half is every sshd's only authorized key). */
  clientKey: string;
  /** Where a client records the hosts' keys (StrictHostKeyChecking=accept-new). */
  knownHosts: string;
  hostKey: string;
  authorizedKeys: string;
}

export function makeSshKeys(t: TestContext): SshKeys {
  const dir = mkdtempSync('/var/tmp/wick-sshd-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const keygen = (file: string) =>
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'wick-test', '-f', file]);
  const clientKey = join(dir, 'client');
  const hostKey = join(dir, 'host');
  keygen(clientKey);
  keygen(hostKey);
  const authorizedKeys = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeys, readFileSync(`${clientKey}.pub`));
  return { dir, clientKey, hostKey, authorizedKeys, knownHosts: join(dir, 'known_hosts') };
}

/** Starts sshd on `host`'s address, port 22; resolves once it listens. */
export async function startSshd(
  host: Host,
  keys: SshKeys,
  sessionEnv: Record<string, string> = {},
): Promise<HostProcess> {
  // sshd's privilege separation folder; /run is the machine's, shared by the hosts.
  mkdirSync('/run/sshd', { recursive: true });
  const config = join(keys.dir, `sshd-${host.name}.conf`);
  const setEnv = Object.entries(sessionEnv).map(([k, v]) => `SetEnv ${k}=${v}`);
  writeFileSync(
    config,
    [
      `ListenAddress ${host.address}`,
      'Port 22',
      `HostKey ${keys.hostKey}`,
      `AuthorizedKeysFile ${keys.authorizedKeys}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'PrintMotd no',
      `PidFile ${join(keys.dir, `sshd-${host.name}.pid`)}`,
      ...setEnv,
      '',
    ].join('\n'),
  );
  const sshd = host.spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config]);
  await sshd.waitForStderr(/Server listening on /);
  return sshd;
}

/** ssh's options for these keys: no prompt, hosts' keys learnt on first contact into our file. */
export function sshOptions(keys: SshKeys): string[] {
  return [
    '-i',
    keys.clientKey,
    '-o',
    'StrictHostKeyChecking=accept-new',
    '-o',
    `UserKnownHostsFile=${keys.knownHosts}`,
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=5',
    '-o',
    'LogLevel=ERROR',
  ];
}
