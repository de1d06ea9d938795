/**
 * Exhaustive, not sampled (issue 18): every schedule of the shapes in the
 * catalog's comment, for the triples with a hide or a move (hide, RSVP, unhide; move,
 * creator deletion, RSVP of the new host) of test/support/schedule-catalog.ts, run on
 * the real table and checked by test/support/schedules.ts: privacy at every
 * observation point (after each change that completes or dies, and after
 * every write that puts index keys once another change has completed), the
 * changes feeds read there too, and at the end the read model of a fresh
 * load of the fold of one order, with nothing owed. The depth
 * (SCHEDULES_DEPTH) is in the catalog's comment; the triples are split over
 * this file and
 * schedules-triples-deletions.exhaustive.test.ts so that jest's two workers share them. Prints how many
 * schedules ran.
 */
import { exploreSuite } from '../support/schedule-catalog.js';

exploreSuite('every schedule of three changes converges, and hides for good: hides and moves', 'triples (moves)');
