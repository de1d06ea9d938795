/**
 * A webhook receiver on this machine, as a consumer would write one: every
 * delivery's signature checked with the standardwebhooks package (its own
 * library, not ours), the changes applied in order to a replica (upsert =
 * store the object, removed = drop the id; `reset` deliveries rebuild it:
 * test/support/webhook-replica.ts, the rule the in-process receivers of the
 * properties keep too), the cursor kept. Its answers are the test's to choose (a status, no
 * answer), so that a receiver can fail, be slow, answer 410 or redirect.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookReplica, verifies, type DeliveredBody } from './webhook-replica.js';

export interface Delivery {
  id: string;
  body: DeliveredBody;
  headers: IncomingHttpHeaders;
  /** Whether one of the secrets given verified its signature. */
  verified: boolean;
}

/** What the receiver answers a delivery: a status, or nothing (the socket kept open until the sender gives up). */
export type Answer = number | 'hang';

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Applied in order: what a consumer that applies every acknowledged delivery holds. */
  readonly replica: Map<string, unknown>;
  /** The cursor of the last acknowledged delivery. */
  readonly cursor: string | undefined;
  secrets: string[];
  answer: (delivery: Delivery) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(opts: { secrets?: string[]; answer?: (d: Delivery) => Answer } = {}): Promise<Receiver> {
  const held = new WebhookReplica();
  const receiver: Receiver = {
    url: '',
    deliveries: [],
    get replica() {
      return held.members;
    },
    get cursor() {
      return held.cursor;
    },
    secrets: opts.secrets ?? [],
    answer: opts.answer ?? (() => 204),
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
      const verified = verifies(receiver.secrets, text, req.headers as Record<string, string>);
      const delivery: Delivery = { id: String(req.headers['webhook-id']), body: JSON.parse(text) as Delivery['body'], headers: req.headers, verified };
      receiver.deliveries.push(delivery);
      const answer = receiver.answer(delivery);
      if (answer === 'hang') return;
      if (answer >= 200 && answer < 300) held.apply(delivery.body);
      res.writeHead(answer, answer >= 300 && answer < 400 ? { location: 'http://169.254.169.254/latest/meta-data/' } : {}).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
