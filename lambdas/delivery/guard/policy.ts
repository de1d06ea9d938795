/** The guard's one setting and the shape of the resolver it takes (the webhooks' code is written against these). */

export interface GuardPolicy {
  /** Only by an explicit local setting (npm start -- --allow-loopback-webhooks, tests).
   * Lets http:// and https:// receivers at 127.0.0.1 / ::1 (any port); never set by the CDK stack. */
  readonly allowLoopback: boolean;
}

export type Resolver = (hostname: string) => Promise<readonly { address: string; family: 4 | 6 }[]>;

/** The only addresses `allowLoopback` opens, and only when every address of the host is one of them. */
export const LOOPBACK_RECEIVERS: ReadonlySet<string> = new Set(['127.0.0.1', '::1']);
