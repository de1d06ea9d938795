/**
 * The Lambda side of the logging and metrics ports: Powertools for AWS Lambda.
 * Both read their settings from the environment the CDK stack sets on every
 * function (lib/observability.ts): POWERTOOLS_SERVICE_NAME,
 * POWERTOOLS_LOG_LEVEL, POWERTOOLS_LOGGER_SAMPLE_RATE (the share of
 * invocations logged at DEBUG), POWERTOOLS_METRICS_NAMESPACE (one per stage).
 * One instance of each per container, made on first use, never at import, so
 * the local server importing a handler file constructs nothing.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Logger } from './logger.js';
import type { MetricsSink } from './metrics.js';

let logger: PowertoolsLogger | undefined;
let metrics: MetricsSink | undefined;

export function lambdaLogger(): PowertoolsLogger {
  return (logger ??= new PowertoolsLogger());
}

// The port is a structural subset of Powertools' Logger; this line fails to compile if that ever stops being true.
const fitsPort: (l: PowertoolsLogger) => Logger = (l) => l;
void fitsPort;

export function lambdaMetrics(): MetricsSink {
  if (metrics) return metrics;
  const emf = new Metrics({ logger: lambdaLogger() });
  // Powertools adds a `service` dimension to every metric by default; the
  // namespace already names the stage, and every extra dimension multiplies
  // the custom metrics CloudWatch bills for, so each metric keeps only its own.
  emf.clearDefaultDimensions();
  metrics = {
    publish(dimensions, values) {
      for (const [name, value] of Object.entries(dimensions)) emf.addDimension(name, value);
      for (const v of values) emf.addMetric(v.name, v.unit === 'Seconds' ? MetricUnit.Seconds : MetricUnit.Count, v.value);
      emf.publishStoredMetrics();
    },
  };
  return metrics;
}
