/**
 * Exhaustive, not sampled (issue 18): every schedule of the triples with a hide or a move (hide, RSVP, unhide; move, creator deletion,
 * RSVP of the new host); the changes feeds are read at every observation point.
 * The scenarios, their shapes, the depth (SCHEDULES_DEPTH) and which file takes
 * which scenario (FILES: shares of about equal time, so that jest's two workers
 * end together) are in test/support/schedule-catalog.ts; the checks (privacy at
 * every observation point; at the end, a fresh load of the fold of one order,
 * with nothing owed) in test/support/schedules.ts. Prints how many schedules ran.
 */
import { exploreSuite } from '../support/schedule-catalog.js';

exploreSuite('every schedule of three changes converges, and hides for good: hides and moves', 'triples (moves)');
