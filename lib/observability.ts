/**
 * Powertools settings every function gets (lambdas/http/powertools.ts reads
 * them): one service name, a metrics namespace per stage, and the log level
 * and debug sampling rate of the stage (context `logLevel`, `logSampleRate`).
 */
import type { StackConfig } from './stack-config.js';

export const SERVICE = 'public-events';

/** Custom metrics of a stage live in their own namespace, so staging never pollutes production's graphs or alarms. */
export function metricsNamespace(stage: StackConfig['stage']): string {
  return `PublicEvents/${stage}`;
}

export function powertoolsEnvironment(config: Pick<StackConfig, 'stage' | 'logLevel' | 'logSampleRate'>): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: SERVICE,
    POWERTOOLS_METRICS_NAMESPACE: metricsNamespace(config.stage),
    POWERTOOLS_LOG_LEVEL: config.logLevel,
    POWERTOOLS_LOGGER_SAMPLE_RATE: String(config.logSampleRate),
  };
}
