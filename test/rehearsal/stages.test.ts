/**
 * The rehearsal of both stages' templates (local/rehearsal/): the bundles
 * from cdk.out behind each template's gateway, every AWS call evaluated
 * against the calling function's role. Every documented route answers 200
 * (the two profile routes included: their BatchGetItem is in their roles
 * now), a change batch goes through the ingest queue and applies, and no
 * call is denied. Runs in jest's "rehearsal" project only.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WAITING_RECEIVES, waitingVisibility } from '../../lambdas/core/retry-backoff.js';
import { REHEARSAL_STAGES, rehearsalRequests } from '../../local/rehearsal/checks.js';
import { dynamoCalls } from '../../local/rehearsal/aws-endpoint.js';
import { evaluate } from '../../local/rehearsal/iam.js';
import { startRehearsal, type Rehearsal } from '../../local/rehearsal/rehearsal.js';
import { Template } from '../../local/rehearsal/template.js';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DEMO_FILE, NOW } from '../support/fixtures.js';
import { routes } from '../../lambdas/routes.js';
import { buildWidget } from '../../lib/widget-bundle.js';

const CHANGES = readFileSync(new URL('../fixtures/changes-example.jsonl', import.meta.url), 'utf8').split('\n').filter(Boolean);

describe.each(Object.entries(REHEARSAL_STAGES))('the %s template, rehearsed', (_stage, context) => {
  let rehearsal: Rehearsal;
  beforeAll(async () => {
    // The walks below send every route's requests twice over (API and custom domain), more than a method's burst on a
    // quick machine: the throttle's clock moves a second per reading, a client well under the stage's rates. The
    // throttle itself is rehearsed in failures.test.ts.
    let throttleMs = 0;
    rehearsal = await startRehearsal({ context, dataFile: DEMO_FILE, now: new Date(NOW), throttleClockMs: () => (throttleMs += 1000) });
  }, 120_000);
  afterAll(async () => rehearsal?.close());

  it('answers 200 on every route of both APIs, through the template gateway and the bundles', async () => {
    const statuses: [string, number][] = [];
    for (const { route, path, headers } of rehearsalRequests(rehearsal.demoKey.key, rehearsal.cursorKey, new Date(NOW))) {
      const res = await fetch(rehearsal.urlFor(path), { headers, redirect: 'manual' });
      await res.arrayBuffer();
      statuses.push([route, res.status]);
    }
    expect(statuses.filter(([, s]) => s !== 200)).toEqual([]);
    // Exactly the routes that declare BatchGetItem (the profile lists, the changes feeds) make it, allowed by their roles.
    const batchGets = rehearsal.endpoint.calls.filter((c) => c.action === 'dynamodb:BatchGetItem');
    const declared = routes.filter((r) => (r.tableReads as readonly string[]).includes('dynamodb:BatchGetItem')).map((r) => r.id);
    expect(declared).toEqual(expect.arrayContaining(['getUserEvents', 'getUserProfileEvents']));
    expect(new Set(batchGets.map((c) => c.fn.replace(/Function.*$/, '')))).toEqual(new Set(declared));
    expect(batchGets.every((c) => c.allowed)).toBe(true);
    // The cursor key: read by exactly the feed functions (the routes that declare it), through their roles, once per
    // container: which version holds which stage (DescribeSecret, one answer), then that version's value, by its id.
    const secretReads = rehearsal.endpoint.calls.filter((c) => c.action.startsWith('secretsmanager:'));
    const readers = routes.filter((r) => (r as { cursorKey?: true }).cursorKey).map((r) => r.id);
    expect(new Set(secretReads.map((c) => c.fn.replace(/Function.*$/, '')))).toEqual(new Set(readers));
    expect(secretReads.every((c) => c.allowed && /:secret:/.test(c.resource))).toBe(true);
    for (const fn of readers) {
      expect(secretReads.filter((c) => c.fn.startsWith(fn)).map((c) => c.operation.replace(/ [0-9a-f]{40}$/, ' VERSION_ID'))).toEqual(['DescribeSecret', 'GetSecretValue VERSION_ID']);
    }
  });

  it('serves both APIs through the custom domain where the stage has one (production), by its routing rules', async () => {
    expect(rehearsal.domains.map((d) => d.name)).toEqual(context.domainName ? [context.domainName] : []);
    for (const domain of rehearsal.domains) {
      const statuses: [string, number][] = [];
      for (const { route, path, headers } of rehearsalRequests(rehearsal.demoKey.key, rehearsal.cursorKey, new Date(NOW))) {
        const res = await fetch(`${domain.url}${path}`, { headers, redirect: 'manual' });
        await res.arrayBuffer();
        statuses.push([route, res.status]);
      }
      expect(statuses.filter(([, s]) => s !== 200)).toEqual([]);
      // The old prefix's rule sends it to the Public API, which redirects it (PRODUCT P15).
      const legacy = await fetch(`${domain.url}/api/ext/v1/events/evt_jazz01`, { redirect: 'manual' });
      expect([legacy.status, legacy.headers.get('location')]).toEqual([308, '/api/public/v1/events/evt_jazz01']);
      // And that Location resolves on the domain: the Public API's answer (docs/endpoints.md).
      const followed = await fetch(`${domain.url}${legacy.headers.get('location')}`, { headers: { 'x-events-api-key': rehearsal.demoKey.key } });
      expect(followed.status).toBe(200);
      // A path no rule matches is API Gateway's own 403 on a custom domain.
      expect((await fetch(`${domain.url}/elsewhere`)).status).toBe(403);
    }
  });

  it('applies a change batch from the ingest queue, as the event source mapping delivers it', async () => {
    const queueId = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
    for (const line of CHANGES) rehearsal.send(queueId, line);
    const result = await rehearsal.drain();
    expect(result).toEqual({ batches: Math.ceil(CHANGES.length / 10), failures: 0, deadLettered: 0 });
    // The ingest function wrote through its role (and nothing else wrote).
    const writes = rehearsal.endpoint.calls.filter((c) => /^dynamodb:(Put|Update)Item$/.test(c.action));
    expect(writes.length).toBeGreaterThan(0);
    expect(new Set(writes.map((c) => c.fn.replace(/Function.*$/, '')))).toEqual(new Set(['Ingest']));
  });

  it('redrives a record that never applies: reported failed in each partial batch response, dead-lettered after maxReceiveCount', async () => {
    const queueId = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
    const deadLetterId = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestDeadLetters'))!;
    rehearsal.send(queueId, '{"type":"event.upserted","version":1}');
    // The queue's RedrivePolicy: 17 receives (lib/ingest.ts, the waiting backoff's count), each a one-record batch the function reports failed.
    expect(await rehearsal.drain()).toEqual({ batches: 17, failures: 17, deadLettered: 1 });
    expect(rehearsal.queues.get(deadLetterId)!.map((m) => m.body)).toEqual(['{"type":"event.upserted","version":1}']);
    rehearsal.queues.get(deadLetterId)!.length = 0;
  });

  it('shortens a waiting record\'s visibility with backoff through its own role (sqs:ChangeMessageVisibility), then dead-letters it after the same receives', async () => {
    const queueId = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
    const deadLetterId = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestDeadLetters'))!;
    // An RSVP whose event never comes: valid, waiting for its reference at every receive.
    const body = JSON.stringify({ type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_never', user_id: 'usr_never', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' } });
    rehearsal.send(queueId, body);
    const seen: number[] = [];
    const queue = rehearsal.queues.get(queueId)!;
    const push = queue.push.bind(queue);
    // The visibility each receive left, read as the failed message goes back (the rehearsal redelivers at once).
    queue.push = (...messages) => (seen.push(...messages.map((m) => m.visibilityTimeout ?? -1)), push(...messages));
    try {
      expect(await rehearsal.drain()).toEqual({ batches: WAITING_RECEIVES, failures: WAITING_RECEIVES, deadLettered: 1 });
    } finally {
      queue.push = push;
    }
    expect(seen).toEqual(Array.from({ length: WAITING_RECEIVES - 1 }, (_, i) => waitingVisibility(i + 1)));
    expect(rehearsal.queues.get(deadLetterId)!.map((m) => m.body)).toEqual([body]);
    rehearsal.queues.get(deadLetterId)!.length = 0;
    expect(rehearsal.problems()).toEqual([]);
  });

  it("lets the ingest function send its continuation to its own queue, and to no other (its role's sqs:SendMessage)", async () => {
    const [queueId, deadLetterId] = ['Queue', 'DeadLetters'].map((name) => [...rehearsal.queues.keys()].find((q) => q.startsWith(`Ingest${name}`))!);
    const ingestFn = rehearsal.invocations.find((fn) => fn.startsWith('IngestFunction'))!;
    const sqs = new SQSClient({ region: 'us-east-1', endpoint: rehearsal.endpoint.url, credentials: { accessKeyId: ingestFn, secretAccessKey: 'x' } });
    const urlOf = (id: string) => `${rehearsal.endpoint.url}/123456789012/${id}`;
    await sqs.send(new SendMessageCommand({ QueueUrl: urlOf(queueId!), MessageBody: 'continuation' }));
    expect(rehearsal.queues.get(queueId!)!.map((m) => m.body)).toEqual(['continuation']);
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: urlOf(deadLetterId!), MessageBody: 'elsewhere' }))).rejects.toThrow(/not authorized to perform: sqs:SendMessage/);
    sqs.destroy();
    rehearsal.queues.get(queueId!)!.length = 0;
    // The refusal is a denial the rehearsal reports, naming function, action and resource.
    expect(rehearsal.endpoint.denials.map((d) => [d.fn, d.action, d.resource])).toEqual([[ingestFn, 'sqs:SendMessage', `arn:aws:sqs:us-east-1:123456789012:${deadLetterId}`]]);
    rehearsal.endpoint.denials.length = 0;
  });

  it("serves the widget where the stage has the Embed distribution (production): the file by its WidgetUrl, its integrity, then the API at the script's origin", async () => {
    const outputs = (rehearsal.assembly.template.Outputs ?? {}) as Record<string, { Value: unknown }>;
    expect(rehearsal.distributions).toHaveLength(outputs.WidgetUrl ? 1 : 0);
    const template = new Template(rehearsal.assembly.template, rehearsal.assembly.stackName, { queueUrl: (id) => id });
    for (const d of rehearsal.distributions) {
      const widgetUrl = String(template.resolve(outputs.WidgetUrl!.Value, 'Outputs.WidgetUrl'));
      expect(widgetUrl).toMatch(new RegExp(`^https://${d.domainName.replace(/\./g, '\\.')}/embed/widget\\.[0-9a-f]{16}\\.js$`));
      // The host page's tag: the file on the edge host, fetched in CORS mode (crossorigin="anonymous").
      const file = widgetUrl.replace(`https://${d.domainName}`, d.url);
      const res = await fetch(file, { headers: { origin: 'https://host.example' } });
      const body = Buffer.from(await res.arrayBuffer());
      expect([res.status, res.headers.get('cache-control'), res.headers.get('content-type'), res.headers.get('access-control-allow-origin'), res.headers.get('x-content-type-options')]).toEqual([200, 'public, max-age=31536000, immutable', 'text/javascript; charset=utf-8', '*', 'nosniff']);
      expect(`sha384-${createHash('sha384').update(body).digest('base64')}`).toBe(String(template.resolve(outputs.WidgetIntegrity!.Value, 'Outputs.WidgetIntegrity')));
      expect(body.toString('utf8')).toBe(buildWidget());
      // A query string reaches no bucket (and changes nothing); a name no deploy put there is S3's 403; no POST.
      expect(Buffer.from(await (await fetch(`${file}?v=2`)).arrayBuffer()).equals(body)).toBe(true);
      expect((await fetch(`${d.url}/embed/widget.0000000000000000.js`)).status).toBe(403);
      expect((await fetch(file, { method: 'POST' })).status).toBe(403);
      // The widget's default API address is its script's origin + /api/embed/v1: the distribution routes it to the Embed API.
      const api = `${new URL(file).origin}/api/embed/v1`;
      // An event the change batch above leaves public (it makes evt_jazz01 private).
      for (const path of ['/users/Alice/events?limit=1&_=1', '/events/evt_workshop05', '/events/evt_workshop05/event.ics']) {
        const answer = await fetch(`${api}${path}`, { headers: { origin: 'https://host.example' } });
        await answer.arrayBuffer();
        expect([path, answer.status, answer.headers.get('access-control-allow-origin')]).toEqual([path, 200, '*']);
      }
    }
  });

  it('saw no denied call, no call it could not interpret, no function error', () => {
    expect(rehearsal.problems()).toEqual([]);
    expect(rehearsal.endpoint.calls.length).toBeGreaterThan(0);
  });

  it("denies a call its role does not grant: the profile route's BatchGetItem without that grant (the 500 this stack had)", async () => {
    const template = new Template(rehearsal.assembly.template, rehearsal.assembly.stackName, { queueUrl: (id) => id });
    const [policyId] = template.ofType('AWS::IAM::Policy').find(([id]) => id.startsWith('getUserProfileEventsRole'))!;
    const policy = template.prop(policyId, 'PolicyDocument');
    const without = { ...policy, Statement: policy.Statement.map((s: { Action: string | string[] }) => ({ ...s, Action: [s.Action].flat().filter((a) => a !== 'dynamodb:BatchGetItem') })) };
    const [call] = dynamoCalls('getUserProfileEvents', 'BatchGetItem', { RequestItems: { [rehearsal.tableName]: { Keys: [{ pk: { S: 'EVENT#evt_jazz01' }, sk: { S: 'EVENT' } }] } } }, new Map());
    expect(await evaluate(call!, 'role', [policy])).toEqual({ allowed: true, decision: 'Allowed' });
    expect(await evaluate(call!, 'role', [without])).toEqual({ allowed: false, decision: 'ImplicitlyDenied' });
  });

  it("keeps the authorizer to API key items: its GetItem of any other partition is denied (dynamodb:LeadingKeys)", async () => {
    const template = new Template(rehearsal.assembly.template, rehearsal.assembly.stackName, { queueUrl: (id) => id });
    const [policyId] = template.ofType('AWS::IAM::Policy').find(([id]) => id.startsWith('AuthorizerRole'))!;
    const policy = template.prop(policyId, 'PolicyDocument');
    const get = (pk: string) => dynamoCalls('Authorizer', 'GetItem', { TableName: rehearsal.tableName, Key: { pk: { S: pk }, sk: { S: 'X' } } }, new Map())[0]!;
    expect((await evaluate(get('APIKEY#abc'), 'role', [policy])).allowed).toBe(true);
    expect((await evaluate(get('EVENT#evt_jazz01'), 'role', [policy])).allowed).toBe(false);
  });
});
