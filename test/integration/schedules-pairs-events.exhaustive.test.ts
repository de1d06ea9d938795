/**
 * Exhaustive, not sampled (issue 18): every schedule of the pairs of
 * test/support/schedule-catalog.ts of an event's changes
 * (with each other or with an RSVP's), run on the real table and checked
 * by test/support/schedules.ts (privacy at every observation point; at the
 * end, a fresh load of the fold of one order, with nothing owed). The shapes
 * and the depth (SCHEDULES_DEPTH) are in the catalog's comment; the other
 * pairs are in schedules-pairs-users.exhaustive.test.ts (two files, so CI's two workers share them). Prints how
 * many schedules ran.
 */
import { exploreSuite, eventPairs } from '../support/schedule-catalog.js';

// The changes feeds are read at observation points in the triples and the duplicates exploration; here that would add minutes to CI.
exploreSuite("every schedule of two changes converges, and hides for good: an event's change races", 'pairs (events)', eventPairs, { feeds: false });
