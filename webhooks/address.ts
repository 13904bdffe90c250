/**
 * Where webhooks may not go: private, loopback, link-local, shared (CGNAT), multicast, reserved and
 * documentation addresses, IPv4 and IPv6, and IPv4 addresses inside IPv6 (`::ffff:10.0.0.1`). The
 * check is made on the address a delivery connects to, resolved at delivery time (poster.ts), so a
 * name that resolved to a public address when registered and to a private one later is refused.
 */
import { BlockList, isIP } from 'node:net';

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** An IPv4 address an IPv6 one carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`), if any. */
function embeddedIpv4(address: string): string | null {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!match) return null;
  if (match[1]) return match[1];
  const high = Number.parseInt(match[2]!, 16);
  const low = Number.parseInt(match[3]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** What a refused address is, for messages. */
export const REFUSED = 'a private, loopback, link-local or reserved address';

/** Whether a delivery may not connect to `address` (an IP address; anything else is refused too). */
export function refused(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const v4 = family === 6 ? embeddedIpv4(address) : address;
  return v4 !== null ? BLOCKED.check(v4, 'ipv4') : BLOCKED.check(address, 'ipv6');
}
