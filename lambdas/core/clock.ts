/**
 * The clock is injected everywhere "now" matters (upcoming vs past, Embed
 * status, the daily quota) so tests can pin it instead of waiting for time to pass.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export function fixedClock(iso: string): Clock {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) throw new Error(`fixedClock: invalid date ${iso}`);
  return () => new Date(at.getTime());
}
