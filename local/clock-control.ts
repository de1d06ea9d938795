/**
 * The local server's data clock, movable while the server runs, so a
 * consumer of the changes feeds can see its cursor expire without a restart
 * (a restart would start a fresh store). `GET /local/clock` answers the
 * server's time and offset; `PUT /local/clock` with `{"offset_days": N}`
 * runs the clock N days ahead of its base (real time, or a test's pinned
 * time), as `--clock-offset-days N` does at start. Only the local server has
 * it: in AWS the clock is the Lambda's own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Clock } from '../lambdas/core/clock.js';

export const CLOCK_PATH = '/local/clock';
const DAY_MS = 86_400_000;
const MAX_BODY_BYTES = 1024;

export const offsetDaysSchema = z.number({ error: 'must be a whole number of days' }).int({ error: 'must be a whole number of days' }).min(-3650).max(3650);
const bodySchema = z.object({ offset_days: offsetDaysSchema }).strict();

export class MovableClock {
  readonly clock: Clock = () => new Date(this.base().getTime() + this.offsetDays * DAY_MS);

  constructor(
    private readonly base: Clock,
    public offsetDays = 0,
  ) {}

  /** Answers GET and PUT on CLOCK_PATH: the envelope with `{now, offset_days}`, or a 400 naming the field. */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'PUT') {
      const text = await readBody(req);
      let parsed: ReturnType<typeof bodySchema.safeParse> | undefined;
      try {
        parsed = text === null ? undefined : bodySchema.safeParse(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      if (!parsed?.success) {
        const issue = parsed?.error.issues[0];
        const field = issue?.path.length ? issue.path.join('.') : 'offset_days';
        const message = issue ? `${field} ${issue.message}` : 'the body must be JSON: {"offset_days": N}';
        return answer(res, 400, { success: false, message, errors: [{ field, message }] });
      }
      this.offsetDays = parsed.data.offset_days;
    } else if (req.method !== 'GET') {
      res.setHeader('allow', 'GET, PUT');
      return answer(res, 405, { success: false, message: 'Use GET or PUT' });
    }
    answer(res, 200, { success: true, data: { now: this.clock().toISOString(), offset_days: this.offsetDays } });
  }
}

/** The body as text, or null past MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
