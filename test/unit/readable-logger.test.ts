/**
 * The local server's log format: one readable line per entry, fields as
 * key=value (quoted when they need it), a stack indented below, entries under
 * the level dropped.
 */
import { describe, expect, it } from '@jest/globals';
import { readableLogger } from '../../lambdas/http/logger.js';

describe('readableLogger', () => {
  const at = () => new Date('2026-11-21T12:00:01.234Z');

  it('writes time, level, message and fields on one line, and a stack below it', () => {
    const lines: string[] = [];
    const logger = readableLogger({ write: (l) => lines.push(l), now: at });
    logger.error('Handler failed', { requestId: 'r-1', route: 'getEvent', errorMessage: 'table "x" missing', stack: 'Error: boom\n    at f (a.ts:1:1)' });
    logger.info('Started', { port: 3000, ok: true });
    expect(lines).toEqual([
      '12:00:01.234 ERROR Handler failed requestId=r-1 route=getEvent errorMessage="table \\"x\\" missing"\n    Error: boom\n        at f (a.ts:1:1)',
      '12:00:01.234 INFO  Started port=3000 ok=true',
    ]);
  });

  it('drops entries under its level (INFO by default)', () => {
    const lines: string[] = [];
    const info = readableLogger({ write: (l) => lines.push(l), now: at });
    info.debug('hidden');
    info.warn('shown');
    readableLogger({ level: 'DEBUG', write: (l) => lines.push(l), now: at }).debug('shown too');
    expect(lines).toEqual(['12:00:01.234 WARN  shown', '12:00:01.234 DEBUG shown too']);
  });
});
