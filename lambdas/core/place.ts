/**
 * Places (PRODUCT P17): how a city and a country are matched, one rule for the
 * dataset's values and a consumer's query, so that "São Paulo", "sao paulo"
 * and " SAO  PAULO " are one city, and "PT", "pt", "PRT", "Portugal" one
 * country.
 *
 * - A city is folded (lambdas/core/place-fold.ts: a full case fold, accents
 *   dropped but never another script's letters, spaces collapsed).
 * - A country is its ISO 3166-1 alpha-2 code whenever the country table
 *   (country-names.generated.ts, from i18n-iso-countries and countries-list)
 *   knows the value: a code of either length, the codes ISO reserves for a
 *   country that has another (UK, EL), an English name or alias, or the
 *   country's name in a language spoken there (Deutschland), with or without
 *   a leading "the". A value it does not know is kept as its folded spelling
 *   behind `~`, so it matches that spelling and never a code; two letters it
 *   does not know too (the query side refuses nothing the data side keeps).
 *
 * A part whose folded spelling is longer than PLACE_PART_MAX_BYTES is named
 * by its hash (boundedPart), so that every key built from a place stays
 * within DynamoDB's limits whatever the contract lets through. Keys built
 * from the parts (index keys, feed scopes) escape `%`, `#` and `*`
 * (placeKeyPart), so that a city cannot forge another key's separator or
 * the feeds' "any" marker.
 */
import { createHash } from 'node:crypto';
import { AMBIGUOUS_COUNTRY_NAMES, COUNTRY_CODE_ALIASES, COUNTRY_TABLE } from './country-names.generated.js';
import { foldPlaceName } from './place-fold.js';

export { foldPlaceName };

const alpha2s = new Set<string>();
const alpha3s = new Map<string, string>();
const countryByName = new Map<string, string>();
for (const line of COUNTRY_TABLE.split('\n')) {
  const [codes, ...names] = line.split('|');
  const [a2, a3] = codes!.split(' ') as [string, string];
  alpha2s.add(a2);
  alpha3s.set(a3, a2);
  for (const name of names) countryByName.set(name, a2);
}
/** Kept for the docs' and tests' sake: names two countries share are in no lookup. */
export const AMBIGUOUS_COUNTRIES: readonly string[] = AMBIGUOUS_COUNTRY_NAMES;

/**
 * The longest part of a place key that is kept as it is spelt, in UTF-8
 * bytes: every real place name is far shorter (the contract's 100 bytes,
 * folded), and a key of two such parts escaped (each at most 3 times as
 * long) is about 1.2 KB, within DynamoDB's 2,048 bytes for a partition key,
 * an index's included (docs/data-model.md, "Discovery").
 */
export const PLACE_PART_MAX_BYTES = 200;
/**
 * The longest city or country a query or a webhook's scope may name, in
 * characters: three times the contract's 100 bytes, so that every place a
 * dataset can hold can be asked for in any case or normalisation form (an
 * upper-case letter can be three, a decomposed one several). What is asked
 * is folded and bounded like the data's, so no length here makes a key
 * DynamoDB refuses. One bound for every way of naming a place: the search
 * and feed routes' parameters and a webhook's place scope.
 */
export const PLACE_QUERY_MAX_LENGTH = 300;
const utf8 = new TextEncoder();

/**
 * A folded part as keys carry it: itself, or past PLACE_PART_MAX_BYTES
 * (compatibility decomposition lengthens a few characters 18 times: a city of
 * 33 U+FDFA is 99 bytes and folds to about 1,100) `H=` and the base64url of
 * its SHA-256. No folded spelling holds a capital letter, so no city spells
 * another's hash.
 */
export function boundedPart(folded: string): string {
  return utf8.encode(folded).length <= PLACE_PART_MAX_BYTES ? folded : `H=${createHash('sha256').update(folded).digest('base64url')}`;
}

/** A city's key, or undefined when there is none (null, empty or only spaces). */
export function cityKey(raw: string | null | undefined): string | undefined {
  if (raw == null) return undefined;
  const folded = foldPlaceName(raw);
  return folded === '' ? undefined : boundedPart(folded);
}

/** An alpha-2 code the standard assigns (any case), or one it reserves for a country that has another, as that country's code; undefined otherwise. */
export function knownAlpha2(raw: string): string | undefined {
  const code = raw.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) return undefined;
  return alpha2s.has(code) ? code : COUNTRY_CODE_ALIASES[code];
}

/**
 * A country's key: its alpha-2 code when the table knows the value (above),
 * else `~` and the folded spelling; undefined when there is no value.
 */
export function countryKey(raw: string | null | undefined): string | undefined {
  if (raw == null) return undefined;
  const trimmed = raw.trim();
  if (trimmed === '') return undefined;
  const alpha2 = knownAlpha2(trimmed);
  if (alpha2) return alpha2;
  if (/^[A-Za-z]{3}$/.test(trimmed)) {
    const fromAlpha3 = alpha3s.get(trimmed.toUpperCase());
    if (fromAlpha3) return fromAlpha3;
  }
  const folded = foldPlaceName(trimmed);
  const byName = countryByName.get(folded) ?? (folded.startsWith('the ') ? countryByName.get(folded.slice(4)) : undefined);
  return byName ?? (folded === '' ? undefined : boundedPart(`~${folded}`));
}

/** A place as the index and the feeds see it: either part may be absent, not both for a query. */
export interface PlaceKey {
  readonly country?: string;
  readonly city?: string;
}

/** The place of an event's `location` (null or partial locations give a partial or empty place). */
export function placeOf(location: { city?: string | null; country?: string | null } | null | undefined): PlaceKey {
  return { country: countryKey(location?.country), city: cityKey(location?.city) };
}

/** Escapes the characters keys use as separators (`#`) and markers (`*`), and the escape itself. */
export function placeKeyPart(part: string): string {
  return part.replaceAll('%', '%25').replaceAll('#', '%23').replaceAll('*', '%2A');
}

/** The "any" marker of a place key's absent part. */
export const ANY_PART = '*';

/** `{country}#{city}` with `*` for an absent part: the name of one place query (city, country or both). */
export function placeName(place: PlaceKey): string {
  return `${place.country === undefined ? ANY_PART : placeKeyPart(place.country)}#${place.city === undefined ? ANY_PART : placeKeyPart(place.city)}`;
}

/**
 * The place queries an event located at `place` answers: city and country,
 * country alone, city alone (each only when its parts exist). An event with
 * neither is in no place.
 */
export function placeQueriesOf(place: PlaceKey): PlaceKey[] {
  const out: PlaceKey[] = [];
  if (place.country !== undefined && place.city !== undefined) out.push({ country: place.country, city: place.city });
  if (place.country !== undefined) out.push({ country: place.country });
  if (place.city !== undefined) out.push({ city: place.city });
  return out;
}

/** Whether an event at `place` answers the query `query` (its given parts equal). */
export function placeMatches(place: PlaceKey, query: PlaceKey): boolean {
  if (query.country === undefined && query.city === undefined) return false;
  return (query.country === undefined || query.country === place.country) && (query.city === undefined || query.city === place.city);
}
