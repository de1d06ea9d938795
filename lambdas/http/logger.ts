/**
 * Structured JSON logs, one object per line. Callers pass explicit fields;
 * nothing logs request headers, so API keys cannot end up in logs.
 */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export function jsonLogger(base: LogFields = {}, write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Logger {
  const emit = (level: string, message: string, fields?: LogFields) =>
    write(JSON.stringify({ level, message, timestamp: new Date().toISOString(), ...base, ...fields }));
  return {
    info: (m, f) => emit('INFO', m, f),
    warn: (m, f) => emit('WARN', m, f),
    error: (m, f) => emit('ERROR', m, f),
  };
}

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

/** What may be logged of an unexpected error: its name and stack, never a request. */
export function errorFields(error: unknown): LogFields {
  return error instanceof Error ? { errorName: error.name, errorMessage: error.message, stack: error.stack } : { error: String(error) };
}
