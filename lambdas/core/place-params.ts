/**
 * The place parameters (`city`, `country`: PRODUCT P17) of the routes that
 * take a place, checked before anything is read: an empty or over-long city,
 * an over-long country or a two-letter one the standard does not assign, and
 * neither given, each answer 400 naming the field.
 */
import * as z from 'zod';
import { ValidationError } from './errors.js';
import { cityKey, countryKey, knownAlpha2, type PlaceKey } from './place.js';

/** The longest city or country a query may give: the dataset's bound for either (docs/dataset-format.md). */
export const PLACE_PART_MAX_LENGTH = 100;
export const PLACE_REQUIRED = 'Give a city, a country or both';

export const cityParam = z
  .string()
  .optional()
  .transform((value, ctx): string | undefined => {
    if (value === undefined) return undefined;
    // The length first: a value of any size is refused without being folded.
    const key = value.length > PLACE_PART_MAX_LENGTH ? undefined : cityKey(value);
    if (key === undefined) {
      ctx.addIssue({ code: 'custom', message: `City must be 1-${PLACE_PART_MAX_LENGTH} characters, not only spaces` });
      return z.NEVER;
    }
    return key;
  })
  .meta({ type: 'string', minLength: 1, maxLength: PLACE_PART_MAX_LENGTH, description: 'A city, matched whatever its case, accents and spacing ("São Paulo", "sao paulo" and " SAO  PAULO " are one city).', example: 'Lisbon' });

export const countryParam = z
  .string()
  .optional()
  .transform((value, ctx): string | undefined => {
    if (value === undefined) return undefined;
    const trimmed = value.trim();
    // A two-letter value is a code: one the standard does not assign names no country, rather than a spelling.
    const key = value.length > PLACE_PART_MAX_LENGTH || trimmed === '' || (/^[A-Za-z]{2}$/.test(trimmed) && !knownAlpha2(trimmed)) ? undefined : countryKey(value);
    if (key === undefined) {
      ctx.addIssue({ code: 'custom', message: `Country must be an ISO 3166-1 alpha-2 code or an English name, 1-${PLACE_PART_MAX_LENGTH} characters` });
      return z.NEVER;
    }
    return key;
  })
  .meta({ type: 'string', minLength: 1, maxLength: PLACE_PART_MAX_LENGTH, description: 'A country: its ISO 3166-1 alpha-2 code (any case) or its English name.', example: 'PT' });

/** The place a request names (its keys, as cityParam and countryParam gave them); neither: 400 naming `city`. */
export function requirePlace(p: { city?: string; country?: string }): PlaceKey {
  if (p.city === undefined && p.country === undefined) throw new ValidationError([{ field: 'city', message: PLACE_REQUIRED }]);
  return { ...(p.country !== undefined ? { country: p.country } : {}), ...(p.city !== undefined ? { city: p.city } : {}) };
}
