/**
 * A setting given to one stage only is rehearsed with that stage's template:
 * production with a stage throttle of 1 request per second (context
 * publicThrottleRate/publicThrottleBurst) answers the route check's second
 * request 429 THROTTLED, with the stack's envelope and Retry-After, where
 * staging's template serves every request.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { PRODUCTION_WITH_BAD_THROTTLE, REHEARSAL_STAGES, rehearsalRequests } from '../../local/rehearsal/checks.js';
import { startRehearsal, type Rehearsal } from '../../local/rehearsal/rehearsal.js';
import { DEMO_FILE, NOW } from '../support/fixtures.js';

const started: Rehearsal[] = [];
afterAll(async () => Promise.all(started.map((r) => r.close())));

async function statusesOf(context: Record<string, string>): Promise<number[]> {
  // The throttle's clock held still: the three requests come at once, however slowly a busy machine sends them.
  const rehearsal = await startRehearsal({ context, dataFile: DEMO_FILE, now: new Date(NOW), throttleClockMs: () => 0 });
  started.push(rehearsal);
  const publicRequests = rehearsalRequests(rehearsal.demoKey.key, rehearsal.cursorKey).filter((r) => r.path.startsWith('/api/public/')).slice(0, 3);
  const replies = await Promise.all(publicRequests.map(({ path, headers }) => fetch(rehearsal.urlFor(path), { headers })));
  const bodies = await Promise.all(replies.map((r) => r.text()));
  const throttled = replies.findIndex((r) => r.status === 429);
  if (throttled >= 0) {
    expect(JSON.parse(bodies[throttled]!)).toEqual({ success: false, message: 'Too many requests. Please try again later.' });
    expect(replies[throttled]!.headers.get('retry-after')).toBe('1');
  }
  return replies.map((r) => r.status);
}

describe('a stage-only setting', () => {
  it('that breaks the Public API in production is caught by rehearsing the production template', async () => {
    expect(await statusesOf(REHEARSAL_STAGES.staging!)).toEqual([200, 200, 200]);
    const production = await statusesOf(PRODUCTION_WITH_BAD_THROTTLE);
    expect(production.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
