/**
 * What a delivery sends through: the outbound guard (lambdas/delivery/guard/,
 * ARCHITECTURE rule 13), the one part that connects to an address someone
 * else chose. These are its request and outcome types as the guard exports
 * them; the delivery takes the send as a function so that a test can stand
 * a receiver of its own behind it (its faults included).
 */
export interface PostRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

export type PostOutcome =
  | { kind: 'answered'; status: number }
  | { kind: 'refused'; errorClass: 'url' | 'address' }
  | { kind: 'failed'; errorClass: 'dns' | 'connect' | 'tls' | 'timeout' | 'too_large' | 'protocol' };

export type Poster = (req: PostRequest) => Promise<PostOutcome>;
