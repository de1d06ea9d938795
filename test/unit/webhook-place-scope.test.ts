/**
 * A webhook's place scope takes exactly what the place routes take
 * (lambdas/core/webhook-rules.ts against lambdas/core/search-params.ts):
 * every city or country a pull consumer can follow, a webhook can, matched
 * to the same place, and what the routes refuse (too long, or nothing left
 * once folded: spaces, punctuation, lone marks) is a 400 naming the field,
 * never a webhook on a feed nobody can read.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { PLACE_QUERY_MAX_LENGTH } from '../../lambdas/core/place.js';
import { cityParam, countryParam } from '../../lambdas/core/search-params.js';
import { resolveScope, webhookScopeSchema, type WebhookScope } from '../../lambdas/core/webhook-rules.js';

// Place-like text: letters of several scripts, marks, spaces and punctuation, around the length bound.
const piece = fc.constantFrom('a', 'Z', 'ß', 'İ', 'ł', 'é', '\u0301', '\u093e', 'ट', 'ー', '東', ' ', '\t', '-', '.', ',', '·', '🎉', 'x'.repeat(50));
const placeText = fc.oneof(fc.array(piece, { maxLength: 12 }).map((p) => p.join('')), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.integer({ min: PLACE_QUERY_MAX_LENGTH - 2, max: PLACE_QUERY_MAX_LENGTH + 2 }).map((n) => 'é'.repeat(n)));

describe("a webhook's place scope and the place routes", () => {
  it('accept the same cities and countries, matched to the same place', () => {
    fc.assert(
      fc.property(placeText, fc.constantFrom('city' as const, 'country' as const), (raw, part) => {
        const query = (part === 'city' ? cityParam : countryParam).safeParse(raw);
        const hook = webhookScopeSchema.safeParse({ type: 'place', [part]: raw });
        expect({ raw, part, hook: hook.success }).toEqual({ raw, part, hook: query.success });
        if (hook.success && query.success) expect(resolveScope(hook.data as WebhookScope).place?.[part]).toBe(query.data);
        if (!hook.success) expect(hook.error.issues.map((i) => i.path.join('.'))).toEqual([part]);
      }),
      { numRuns: 2_000 },
    );
  });

  it('the longest the routes take is the longest a scope takes', () => {
    const at = (n: number) => webhookScopeSchema.safeParse({ type: 'place', city: 'a'.repeat(n) }).success;
    expect([at(PLACE_QUERY_MAX_LENGTH), at(PLACE_QUERY_MAX_LENGTH + 1)]).toEqual([true, false]);
  });
});
