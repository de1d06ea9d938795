/**
 * In-memory implementations of the logging and metrics ports, for tests that
 * look at what a handler logged or counted without going through stdout.
 */
import type { LogFields, Logger } from '../../lambdas/http/logger.js';
import type { MetricValue, MetricsSink } from '../../lambdas/http/metrics.js';

export interface LogEntry extends LogFields {
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  message: string;
}

export function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: LogEntry['level']) => (message: string, ...fields: LogFields[]) => entries.push({ ...Object.assign({}, ...fields), level, message });
  return { entries, debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') };
}

export interface Published {
  dimensions: Readonly<Record<string, string>>;
  values: readonly MetricValue[];
}

export function recordingMetrics(): MetricsSink & { published: Published[]; value: (name: string, dimensions: Record<string, string>) => number[] } {
  const published: Published[] = [];
  return {
    published,
    publish: (dimensions, values) => published.push({ dimensions: { ...dimensions }, values: [...values] }),
    /** Every value of the metric published under exactly these dimensions. */
    value: (name, dimensions) =>
      published
        .filter((p) => JSON.stringify(Object.entries(p.dimensions).sort()) === JSON.stringify(Object.entries(dimensions).sort()))
        .flatMap((p) => p.values.filter((v) => v.name === name).map((v) => v.value)),
  };
}
