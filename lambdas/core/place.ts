/**
 * Places (PRODUCT P17): how a city and a country are matched, one rule for the
 * dataset's values and a consumer's query, so that "São Paulo", "sao paulo"
 * and " SAO  PAULO " are one city, and "PT", "pt" and "Portugal" one country.
 *
 * - A city is folded: Unicode compatibility decomposition (NFKD), combining
 *   marks dropped, lower-cased, runs of white space made one space, trimmed.
 * - A country is its ISO 3166-1 alpha-2 code. The dataset's value and the
 *   query's are mapped by i18n-iso-countries (English names and their
 *   aliases, alpha-2 and alpha-3 codes); a value the library does not know
 *   is kept as its folded spelling behind `~`, so it matches that spelling
 *   and never a code.
 *
 * Keys built from these (index keys, feed scopes) escape `%`, `#` and `*`
 * (placeKeyPart), so that a city cannot forge another key's separator or
 * the feeds' "any" marker.
 */
// The library without its Node entry, which registers every one of its languages (about 700 KB in each
// function's bundle); English, the one read here, is registered below.
import countries from 'i18n-iso-countries/index.js';
import en from 'i18n-iso-countries/langs/en.json' with { type: 'json' };

countries.registerLocale(en);

/** The folded spelling of a place name: what two spellings of one city share. */
export function foldPlaceName(raw: string): string {
  return raw.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** A city's key, or undefined when there is none (null, empty or only spaces). */
export function cityKey(raw: string | null | undefined): string | undefined {
  if (raw == null) return undefined;
  const folded = foldPlaceName(raw);
  return folded === '' ? undefined : folded;
}

/** An alpha-2 code the standard assigns (any case), upper-cased; undefined otherwise. */
export function knownAlpha2(raw: string): string | undefined {
  const code = raw.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && countries.isValid(code) ? code : undefined;
}

/**
 * A country's key: its alpha-2 code when the library knows the value (a code
 * of either length, an English name or alias, also without its accents), else
 * `~` and the folded spelling; undefined when there is no value.
 */
export function countryKey(raw: string | null | undefined): string | undefined {
  if (raw == null) return undefined;
  const trimmed = raw.trim();
  if (trimmed === '') return undefined;
  const alpha2 = knownAlpha2(trimmed);
  if (alpha2) return alpha2;
  if (/^[A-Za-z]{3}$/.test(trimmed)) {
    const fromAlpha3 = countries.alpha3ToAlpha2(trimmed.toUpperCase());
    if (fromAlpha3) return fromAlpha3;
  }
  const byName = countries.getAlpha2Code(trimmed, 'en') ?? countries.getSimpleAlpha2Code(foldPlaceName(trimmed), 'en');
  if (byName) return byName;
  return `~${foldPlaceName(trimmed)}`;
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
