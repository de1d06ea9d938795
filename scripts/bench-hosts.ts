/**
 * How the paginated lists scale with a host's history: the same page (10
 * events) asked of hosts with N public events, for several N. Per route: read
 * capacity, DynamoDB round trips and handler time (median), and the ratio of
 * the largest host's figure to the smallest's (the goal is ≤ 1.5: a page
 * should cost what it holds, not what the host ever held).
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { fixedClock } from '../lambdas/core/clock.js';
import { configSchema } from '../lambdas/core/config.js';
import { createDeps, type HandlerModule, type HttpHandler } from '../lambdas/http/deps.js';
import { silentLogger } from '../lambdas/http/logger.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { DynamoRepository } from '../lambdas/store/reads/repository.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';
import { bigHostDataset } from './big-host.js';
import { staticKeyring } from '../lambdas/core/feed-cursor.js';

const CASES: { name: string; handler: string; query: Record<string, string> }[] = [
  { name: 'upcoming-events?limit=10', handler: 'get-user-upcoming-events', query: { limit: '10' } },
  { name: 'past-events?limit=10', handler: 'get-user-past-events', query: { limit: '10' } },
  { name: 'events?type=upcoming&limit=10', handler: 'get-user-events', query: { type: 'upcoming', limit: '10' } },
  { name: 'events?type=past&limit=10', handler: 'get-user-events', query: { type: 'past', limit: '10' } },
  { name: 'events?type=profile&limit=10', handler: 'get-user-events', query: { type: 'profile', limit: '10' } },
  { name: 'events?limit=10', handler: 'get-user-events', query: { limit: '10' } },
  { name: 'Embed events?limit=10', handler: 'embed-get-user-events', query: { limit: '10' } },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function hostFigures(sizes: number[], iterations: number, now: string): Promise<string[]> {
  const store = await startDynalite();
  const client = createDocumentClient({ endpoint: store.endpoint });
  let calls = 0;
  let capacity = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      calls++;
      capacity += (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      return out;
    },
    { step: 'serialize', name: 'hostBench', priority: 'high' },
  );
  const figures = new Map<string, { rcu: number; calls: number; ms: number }[]>();
  for (const size of sizes) {
    const table = `bench-host-${size}`;
    await ensureTable(client, table);
    await writeDataset(client, table, bigHostDataset({ username: 'venue', events: size, now }));
    const config = configSchema.parse({ tableName: table, serviceName: 'events', siteUrl: 'https://example.org', userEventsVariant: 'typed' });
    const repository = new DynamoRepository(client, table);
    const deps = createDeps(config, { reader: repository, keys: repository, feeds: repository, cursorKeys: staticKeyring(Buffer.from('bench-cursor-key')), clock: fixedClock(now), logger: silentLogger });
    for (const c of CASES) {
      const mod = (await import(`../lambdas/handlers/${c.handler}.js`)) as HandlerModule<HttpHandler>;
      const handler = mod.build(deps);
      const event = { pathParameters: { username: 'venue' }, queryStringParameters: c.query, headers: {}, httpMethod: 'GET' } as unknown as APIGatewayProxyEvent;
      const context = { awsRequestId: 'bench' } as Context;
      calls = 0;
      capacity = 0;
      const res = await handler(event, context);
      if (res.statusCode !== 200) throw new Error(`${c.name} on ${size} events: ${res.statusCode} ${res.body}`);
      const measured = { rcu: capacity, calls };
      const samples: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t = performance.now();
        await handler(event, context);
        samples.push(performance.now() - t);
      }
      figures.set(c.name, [...(figures.get(c.name) ?? []), { ...measured, ms: median(samples) }]);
    }
  }
  client.destroy();
  await store.close();

  const first = sizes[0]!;
  const last = sizes[sizes.length - 1]!;
  const rows = [
    `| Route | ${sizes.map((n) => `${n.toLocaleString('en')} events: RCU / calls / ms`).join(' | ')} | RCU ${last.toLocaleString('en')} : ${first.toLocaleString('en')} | ms ${last.toLocaleString('en')} : ${first.toLocaleString('en')} |`,
    `|---|${sizes.map(() => '---|').join('')}---|---|`,
  ];
  for (const [name, fs] of figures) {
    const a = fs[0]!;
    const z = fs[fs.length - 1]!;
    rows.push(
      `| ${name} | ${fs.map((f) => `${f.rcu.toFixed(1)} / ${f.calls} / ${f.ms.toFixed(1)}`).join(' | ')} | ${(z.rcu / a.rcu).toFixed(1)} | ${(z.ms / a.ms).toFixed(1)} |`,
    );
  }
  return rows;
}
