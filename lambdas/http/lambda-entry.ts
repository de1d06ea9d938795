/**
 * Turns a handler factory into a Lambda export. In Lambda the configuration is
 * parsed and clients are created at module load (init phase), so a bad
 * configuration fails the cold start loudly; elsewhere (local server, tests)
 * importing a handler file has no side effects.
 *
 * Every Lambda invocation also goes through Powertools' middy middleware
 * (request id, cold start, function name on every log line; debug sampling
 * re-drawn per invocation; keys reset after it), gets API Gateway's request id
 * as its correlation id, and an HTTP handler's answer is counted per route
 * and status class (lambdas/http/metrics.ts).
 */
import { configFromEnv } from '../core/config.js';
import { createDeps, type Deps } from './deps.js';
import { instrument, type AnyHandler, type EntryKind } from './instrument.js';
import { lambdaLogger, lambdaMetrics } from './powertools.js';

export type { EntryKind };

let shared: Deps | undefined;
const lambdaDeps = (): Deps => (shared ??= createDeps(configFromEnv(process.env), { logger: lambdaLogger(), metrics: lambdaMetrics() }));

export function lambdaEntry<H extends AnyHandler>(build: (deps: Deps) => H, kind: EntryKind = 'http'): H {
  const instrumented = (deps: Deps) => instrument(build(deps), deps, kind);
  let built: H | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? instrumented(lambdaDeps()) : undefined;
  return (async (event, context) => {
    const answer = await (built ??= instrumented(lambdaDeps()))(event, context);
    // A read of the cursor keys started beside the page (lambdas/core/cursor-reads.ts) ends before the answer: Lambda
    // freezes the container once the handler returns, and a call left in flight would end on a dead connection.
    await lambdaDeps().cursorKeys.settled?.();
    return answer;
  }) as H;
}
