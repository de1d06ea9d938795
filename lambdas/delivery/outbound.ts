/**
 * What a delivery sends through: the outbound guard (lambdas/delivery/guard/,
 * ARCHITECTURE rule 13), the one part that connects to an address someone
 * else chose. The delivery takes the send as a function of the guard's own
 * request and outcome types, so that a test can stand a receiver of its own
 * behind it (its faults included) and the types cannot drift from the guard's.
 */
import type { PostOutcome, PostRequest } from './guard/guard.js';

export type { PostOutcome, PostRequest };

export type Poster = (req: PostRequest) => Promise<PostOutcome>;
