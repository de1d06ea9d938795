/**
 * Turns a handler factory into a Lambda export. In Lambda the configuration is
 * parsed and clients are created at module load (init phase), so a bad
 * configuration fails the cold start loudly; elsewhere (local server, tests)
 * importing a handler file has no side effects.
 */
import { configFromEnv } from '../core/config.js';
import { createDeps, type Deps } from './deps.js';

// `any` only widens the constraint so that every Lambda handler signature fits;
// the handler's own parameter types are kept by the generic `H`.
type AnyHandler = (event: any, context: any) => Promise<any>;

let shared: Deps | undefined;
const lambdaDeps = (): Deps => (shared ??= createDeps(configFromEnv(process.env)));

export function lambdaEntry<H extends AnyHandler>(build: (deps: Deps) => H): H {
  let built: H | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? build(lambdaDeps()) : undefined;
  return ((event, context) => (built ??= build(lambdaDeps()))(event, context)) as H;
}
