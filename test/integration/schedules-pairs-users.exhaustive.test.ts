/**
 * Exhaustive, not sampled (issue 18): every schedule of the shapes below, for
 * every pair of test/support/schedule-catalog.ts where a user's change races, run on the real table
 * and checked by test/support/schedules.ts: privacy at every observation
 * point (after each change that completes or dies, and after every write
 * that puts index keys once another change has completed), and at the end
 * the read model of a fresh load of the fold of one order, with nothing owed.
 * The shapes, and the depth (SCHEDULES_DEPTH), are in the catalog's comment;
 * the other pairs are in schedules-pairs-events.exhaustive.test.ts.
 * Prints how many schedules ran.
 */
import { exploreSuite, userPairs } from '../support/schedule-catalog.js';

exploreSuite("every schedule of two changes converges, and hides for good: a user's change races", 'pairs (users)', userPairs);
