/**
 * Exhaustive, not sampled (issue 18): every schedule of the pairs of
 * test/support/schedule-catalog.ts where a user's change races, run on the real table and checked
 * by test/support/schedules.ts (privacy at every observation point; at the
 * end, a fresh load of the fold of one order, with nothing owed). The shapes
 * and the depth (SCHEDULES_DEPTH) are in the catalog's comment; the other
 * pairs are in schedules-pairs-events.exhaustive.test.ts (two files, so CI's two workers share them). Prints how
 * many schedules ran.
 */
import { exploreSuite, userPairs } from '../support/schedule-catalog.js';

// The changes feeds are read at observation points in the triples and the duplicates exploration; here that would add minutes to CI.
exploreSuite("every schedule of two changes converges, and hides for good: a user's change races", 'pairs (users)', userPairs, { feeds: false });
