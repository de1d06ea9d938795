/**
 * When two versions of an item say the same thing: equal apart from the
 * bookkeeping a derivation stamps on them (its number, a tombstone's expiry,
 * a tally or feed note, a recount ticket). A reveal's marker (`revealing`) is NOT
 * bookkeeping here on purpose: an item that carries one differs from every
 * target, so the next derivation always rewrites it (derivation.ts).
 */
type Item = Record<string, unknown>;

const BOOKKEEPING = new Set(['gen', 'expires_at', 'tally_pending', 'tally_from', 'feed_note', 'ticket', 'counted']);

export function sameContent(a: Item, b: Item): boolean {
  return stableJson(withoutBookkeeping(a)) === stableJson(withoutBookkeeping(b));
}

function withoutBookkeeping(item: Item): Item {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !BOOKKEEPING.has(k)));
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Item)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
