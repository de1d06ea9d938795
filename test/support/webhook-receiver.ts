/**
 * A webhook receiver on this machine, as a consumer would write one: every
 * delivery's signature checked with the standardwebhooks package (its own
 * library, not ours), the changes applied in order to a replica (upsert =
 * store the object, removed = drop the id; `reset` deliveries rebuild it),
 * the cursor kept. Its answers are the test's to choose (a status, no
 * answer), so that a receiver can fail, be slow, answer 410 or redirect.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  id: string;
  body: { webhook_id: string; scope: unknown; changes: { id: string; change: string; event?: unknown; guest?: unknown }[]; cursor: string; reset?: true };
  headers: IncomingHttpHeaders;
  /** The body as it arrived (what the signature covers). */
  raw: string;
  /** Whether one of the secrets given verified its signature. */
  verified: boolean;
}

/** What the receiver answers a delivery: a status, or nothing (the socket kept open until the sender gives up). */
export type Answer = number | 'hang';

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Applied in order: what a consumer that applies every acknowledged delivery holds. */
  replica: Map<string, unknown>;
  /** The cursor of the last acknowledged delivery. */
  cursor: string | undefined;
  secrets: string[];
  answer: (delivery: Delivery) => Answer;
  /** Whether one of `secrets` verifies the delivery's signature (standardwebhooks: each of its v1 signatures tried, 5 minutes' tolerance). */
  verify(delivery: Delivery, secrets: readonly string[]): boolean;
  /** Resolves once `count` deliveries have arrived in all (for a sender in another process: waits on the event, not the clock). */
  arrived(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(opts: { secrets?: string[]; answer?: (d: Delivery) => Answer; port?: number } = {}): Promise<Receiver> {
  let resetting: Map<string, unknown> | undefined;
  const waiting: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    deliveries: [],
    replica: new Map(),
    cursor: undefined,
    secrets: opts.secrets ?? [],
    answer: opts.answer ?? (() => 204),
    verify: (delivery, secrets) => verifies(delivery.raw, delivery.headers, secrets),
    arrived: (count) => (receiver.deliveries.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const verified = verifies(text, req.headers, receiver.secrets);
      const delivery: Delivery = { id: String(req.headers['webhook-id']), body: JSON.parse(text) as Delivery['body'], headers: req.headers, raw: text, verified };
      receiver.deliveries.push(delivery);
      const answer = receiver.answer(delivery);
      if (answer !== 'hang') {
        if (answer >= 200 && answer < 300) apply(delivery);
        res.writeHead(answer, answer >= 300 && answer < 400 ? { location: 'http://169.254.169.254/latest/meta-data/' } : {}).end('ok');
      }
      for (const w of waiting.splice(0)) if (receiver.deliveries.length >= w.count) w.resolve(); else waiting.push(w);
    });
  });
  const apply = (d: Delivery) => {
    // A fresh start: the deliveries marked `reset` list the scope's present contents; the first one without replaces the copy.
    if (d.body.reset) resetting ??= new Map();
    else if (resetting) {
      receiver.replica = resetting;
      resetting = undefined;
    }
    const target = resetting ?? receiver.replica;
    for (const c of d.body.changes) {
      if (c.change === 'removed') target.delete(c.id);
      else target.set(c.id, c.event ?? c.guest);
    }
    receiver.cursor = d.body.cursor;
  };
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

function verifies(raw: string, headers: IncomingHttpHeaders, secrets: readonly string[]): boolean {
  return secrets.some((s) => {
    try {
      new Webhook(s).verify(raw, headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  });
}
