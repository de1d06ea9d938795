/**
 * The server an end-to-end suite talks to: the local server (the TypeScript
 * sources behind the route table's gateway), or, in jest's "rehearsal"
 * project (E2E_TARGET=rehearsal), the rehearsal of the synthesized stack
 * (local/rehearsal/): the bundles from cdk.out behind the template's own
 * gateway, every AWS call checked against its role. A suite written against
 * this runs unchanged on both; where the two differ, the suite says which one
 * AWS matches.
 */
import { expect } from '@jest/globals';
import { REHEARSAL_STAGES, REHEARSED_SITE_URLS } from '../../local/rehearsal/checks.js';
import { startRehearsal, type Rehearsal } from '../../local/rehearsal/rehearsal.js';
import { SURFACES } from '../../lambdas/routes.js';
import { forgetDocuments } from './contract.js';
import { DEMO_FILE, NOW } from './fixtures.js';
import { startTestServer } from './local.js';
import { readableLogger } from '../../lambdas/http/logger.js';

export type TargetName = 'local' | 'rehearsal';
export const TARGET: TargetName = process.env.E2E_TARGET === 'rehearsal' ? 'rehearsal' : 'local';

export interface Target {
  readonly name: TargetName;
  readonly url: string;
  readonly publicBaseUrl: string;
  readonly embedBaseUrl: string;
  /** The SITE_URL the functions build links with. */
  readonly siteUrl: string;
  /** The store (dynalite) and the table's name there, for `npm run keys -- … --endpoint … --table …`. */
  readonly storeEndpoint: string;
  readonly tableName: string;
  readonly rehearsal?: Rehearsal;
  close(): Promise<void>;
}


/**
 * Starts the suite's target with the demo data and the clock at NOW. On the
 * rehearsal, `siteUrl` is the stack's context (the functions' SITE_URL in the
 * template); after the suite, no AWS call may have been denied and no
 * function may have failed.
 */
export interface TargetOptions {
  siteUrl?: string;
  /** A clock the suite moves (default: NOW). */
  clock?: () => Date;
  /** Every log line of the handlers (local: the server's logger at DEBUG; rehearsal: what the functions write). */
  onLog?: (line: string) => void;
}

export async function startTarget(opts: TargetOptions = {}): Promise<Target> {
  if (TARGET === 'local') {
    const server = await startTestServer({
      ...(opts.siteUrl ? { siteUrl: opts.siteUrl } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.onLog ? { logger: readableLogger({ level: 'DEBUG', write: opts.onLog }) } : {}),
    });
    return {
      name: 'local',
      url: server.url,
      publicBaseUrl: server.publicBaseUrl,
      embedBaseUrl: server.embedBaseUrl,
      siteUrl: opts.siteUrl ?? server.url.replace('127.0.0.1', 'localhost'),
      storeEndpoint: server.storeEndpoint,
      tableName: server.tableName,
      close: () => server.close(),
    };
  }
  const siteUrl = opts.siteUrl ?? REHEARSED_SITE_URLS[0]!;
  // Throttles off: a suite sends a key's requests faster than its plan's 10 per second (AWS would answer
  // 429 THROTTLED); test/rehearsal/ checks the template's throttles on their own.
  const rehearsal = await startRehearsal({
    context: { ...REHEARSAL_STAGES.staging!, siteUrl },
    dataFile: DEMO_FILE,
    now: opts.clock ?? new Date(NOW),
    throttle: false,
    ...(opts.onLog ? { onLog: (_fn: string, line: string) => opts.onLog!(line) } : {}),
  });
  const publicBaseUrl = rehearsal.urlFor(`${SURFACES.public}/openapi.json`).replace(/\/openapi\.json$/, '');
  const embedBaseUrl = rehearsal.urlFor(`${SURFACES.embed}/openapi.json`).replace(/\/openapi\.json$/, '');
  return {
    name: 'rehearsal',
    url: new URL(publicBaseUrl).origin,
    publicBaseUrl,
    embedBaseUrl,
    siteUrl,
    storeEndpoint: rehearsal.storeEndpoint,
    tableName: rehearsal.tableName,
    rehearsal,
    close: async () => {
      forgetDocuments(new URL(publicBaseUrl).origin);
      forgetDocuments(new URL(embedBaseUrl).origin);
      // Everything that would fail in AWS fails the suite: a denied call names the function, the action and the resource.
      const problems = rehearsal.problems();
      await rehearsal.close();
      expect(problems).toEqual([]);
    },
  };
}
