/**
 * Exhaustive, not sampled (issue 18): every schedule of the pairs of an event's changes, or an event's and an RSVP's
 * (deletions, hides, re-creates) of
 * test/support/schedule-catalog.ts, run on the real table and checked by
 * test/support/schedules.ts (privacy at every observation point; at the end,
 * a fresh load of the fold of one order, with nothing owed). The shapes and
 * the depth (SCHEDULES_DEPTH) are in the catalog's comment, and which file
 * takes which scenario in its FILES: the catalog is split into files of
 * about equal time so that jest's two workers share them, at the default
 * depth and at deep. Prints how many schedules ran.
 */
import { exploreSuite } from '../support/schedule-catalog.js';

// The changes feeds are read at observation points in the triples and the duplicates exploration; here that would add minutes to CI.
exploreSuite("every schedule of two changes converges, and hides for good: an event's change races", 'pairs (events)', { feeds: false });
