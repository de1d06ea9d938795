/**
 * The logging port: what handlers, the envelope and the ingest need, small
 * enough that Powertools' Logger satisfies it as is (lambdas/http/powertools.ts,
 * in Lambda) and the local server can print readable lines instead. Callers
 * pass explicit fields; nothing logs request headers or bodies, so API keys,
 * their hashes, e-mails and phone numbers cannot end up in logs.
 */
export type LogFields = Record<string, unknown>;

/** Fields are a rest parameter only because that is the shape of Powertools' own methods; callers pass at most one object. */
export interface Logger {
  debug(message: string, ...fields: LogFields[]): void;
  info(message: string, ...fields: LogFields[]): void;
  warn(message: string, ...fields: LogFields[]): void;
  error(message: string, ...fields: LogFields[]): void;
}

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * One human-readable line per entry for `npm start` (on stderr, beside the
 * access lines on stdout): `12:00:01.234 ERROR Handler failed route=getEvent …`,
 * a stack indented below it.
 */
export function readableLogger(
  options: { level?: LogLevel; write?: (line: string) => void; now?: () => Date } = {},
): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level ?? 'INFO');
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = options.now ?? (() => new Date());
  const emit = (level: LogLevel, message: string, fields: LogFields[]) => {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    const { stack, ...rest } = Object.assign({}, ...fields) as LogFields;
    const pairs = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"=]/.test(v) ? v : JSON.stringify(v)}`);
    const line = [now().toISOString().slice(11, 23), level.padEnd(5), message, ...pairs].join(' ');
    write(typeof stack === 'string' ? `${line}\n${stack.replace(/^/gm, '    ')}` : line);
  };
  return {
    debug: (m, ...f) => emit('DEBUG', m, f),
    info: (m, ...f) => emit('INFO', m, f),
    warn: (m, ...f) => emit('WARN', m, f),
    error: (m, ...f) => emit('ERROR', m, f),
  };
}

export const silentLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** What may be logged of an unexpected error: its name and stack, never a request. */
export function errorFields(error: unknown): LogFields {
  return error instanceof Error ? { errorName: error.name, errorMessage: error.message, stack: error.stack } : { error: String(error) };
}
