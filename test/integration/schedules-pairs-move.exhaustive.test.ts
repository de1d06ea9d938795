/**
 * Exhaustive, not sampled (issue 18): every schedule of an event moved across a year boundary raced by its hide.
 * The scenarios, their shapes, the depth (SCHEDULES_DEPTH) and which file takes
 * which scenario (FILES: shares of about equal time, so that jest's two workers
 * end together) are in test/support/schedule-catalog.ts; the checks (privacy at
 * every observation point; at the end, a fresh load of the fold of one order,
 * with nothing owed) in test/support/schedules.ts. Prints how many schedules ran.
 */
import { exploreSuite } from '../support/schedule-catalog.js';

// The changes feeds are read at observation points in the triples and the duplicates exploration; here that would add minutes to CI.
exploreSuite('every schedule of two changes converges, and hides for good: a move across a year boundary vs a hide', 'pairs (move)', { feeds: false });
