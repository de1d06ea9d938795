import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 characters from the CSPRNG (randomInt avoids modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}

/**
 * A moment as 8 base62 digits of its milliseconds since 1970 (enough until
 * the year 8888). The alphabet is in ASCII order, so these strings sort as
 * the moments do: a key id that starts with one sorts by creation time.
 */
export function timeBase62(at: Date): string {
  let n = Math.max(0, Math.floor(at.getTime()));
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}
