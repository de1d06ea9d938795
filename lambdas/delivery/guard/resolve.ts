/** Name resolution for the guard: the system's resolver by default, any `Resolver` in its place (tests, the local server). */
import { lookup } from 'node:dns/promises';
import type { Resolver } from './policy.js';

/**
 * getaddrinfo, as every other connection of the function would resolve (the runtime's /etc/hosts and resolver
 * included), every address it gives in the order it gives them: the guard checks them all and connects to no other.
 */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export type Resolution = { ok: true; addresses: readonly string[] } | { ok: false; reason: string };

/** Never throws: a resolver's failure (its error code, when it has one) is a reason, as is an empty answer. */
export async function resolveHost(hostname: string, resolver: Resolver): Promise<Resolution> {
  try {
    const answers = await resolver(hostname);
    if (!Array.isArray(answers) || answers.length === 0) return { ok: false, reason: 'it resolves to no address' };
    return { ok: true, addresses: answers.map((answer) => String(answer?.address)) };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return { ok: false, reason: typeof code === 'string' ? `it does not resolve (${code})` : 'it does not resolve' };
  }
}
