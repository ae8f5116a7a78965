import { isIP } from 'node:net';

/**
 * Whether an address stays on this machine: 127.0.0.0/8, ::1, an IPv4-mapped loopback, or the
 * name localhost. Nothing sent to it crosses a wire, so it may go unencrypted.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}
