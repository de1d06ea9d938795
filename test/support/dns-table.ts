/**
 * A name resolver the tests own, for the outbound guard on the local server
 * (its `webhookGuard.resolver`): each host answers the addresses set for it,
 * or fails as a name that does not exist; a host's answer can change between
 * a webhook's create and its deliveries (a host that turns private). Every
 * question is counted, so a test can see the guard asked it.
 */
import type { Resolver } from '../../lambdas/delivery/guard/guard.js';
import { isIP } from 'node:net';

export interface DnsTable {
  resolver: Resolver;
  set(host: string, addresses: readonly string[]): void;
  /** Hosts asked, in order. */
  asked: string[];
}

export function dnsTable(initial: Record<string, readonly string[]> = {}): DnsTable {
  const answers = new Map(Object.entries(initial));
  const asked: string[] = [];
  return {
    asked,
    set: (host, addresses) => void answers.set(host, addresses),
    resolver: async (hostname) => {
      asked.push(hostname);
      const addresses = answers.get(hostname);
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
    },
  };
}
