/**
 * The OpenAPI documents (PRODUCT P15): generated from the route table and the
 * zod schemas, covering every route, linted by Redocly CLI with zero errors,
 * their parameter metadata true to the schemas that validate, their examples
 * valid, and the committed copies in docs/openapi/ current.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import * as z from 'zod';
import { embedEventSchema, errorEnvelopeSchema, guestSchema, paginationSchema, publicEventSchema, validationErrorSchema } from '../../lambdas/core/response-schemas.js';
import { buildDocument } from '../../lambdas/openapi/document.js';
import { EXAMPLES } from '../../lambdas/openapi/examples.generated.js';
import { DEFAULT_DOCUMENT_OPTIONS, documentFiles } from '../../local/schema-files.js';
import { OPERATIONS } from '../../lambdas/openapi/operations.js';
import { parseParams } from '../../lambdas/core/params.js';
import { ValidationError } from '../../lambdas/core/errors.js';
import { routes, type RouteDefinition, type Surface } from '../../lambdas/routes.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const table: readonly RouteDefinition[] = routes;

type Doc = ReturnType<typeof buildDocument>;
// `any`: OpenAPI objects are read by path here; their library types are unions of refs and objects.
const op = (doc: Doc, path: string, method = 'get'): any => (doc.paths as any)[path][method];

const docs: Record<Surface, Doc> = {
  public: buildDocument('public', DEFAULT_DOCUMENT_OPTIONS),
  embed: buildDocument('embed', DEFAULT_DOCUMENT_OPTIONS),
};

describe('the OpenAPI documents', () => {
  it.each(['public', 'embed'] as const)('%s: OpenAPI 3.1 with exactly one GET operation per route of the surface', (surface) => {
    const doc = docs[surface];
    expect(doc.openapi).toBe('3.1.0');
    const expected = table.filter((r) => r.surface === surface).map((r) => `${r.path} ${r.id}`).sort();
    const actual = Object.entries(doc.paths ?? {}).flatMap(([path, item]) => (item.get ? [`${path} ${item.get.operationId}`] : [])).sort();
    expect(actual).toEqual(expected);
  });

  it('has a description for every route in the table', () => {
    for (const route of table) expect(OPERATIONS[route.id as keyof typeof OPERATIONS]).toBeInstanceOf(Function);
  });

  it('states defaults, bounds and enums of the parameters', () => {
    const guests = op(docs.public, '/events/{eventId}/guests').parameters as Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }>;
    const byName = Object.fromEntries(guests.map((p) => [p.name, p]));
    expect(byName.eventId).toMatchObject({ in: 'path', required: true, schema: { type: 'string', pattern: expect.stringContaining('evt_') } });
    expect(byName.status).toMatchObject({ in: 'query', required: false, schema: { enum: ['yes', 'maybe', 'no', 'all'], default: 'yes' } });
    expect(byName.limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } });
    expect(byName.offset).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } });
    const embedList = op(docs.embed, '/users/{username}/events').parameters as Array<{ name: string; schema: Record<string, unknown> }>;
    expect(embedList.map((p) => p.name).sort()).toEqual(['from', 'limit', 'order', 'since', 'to', 'username']);
    expect(embedList.find((p) => p.name === 'limit')!.schema).toMatchObject({ default: 50 });
    expect(embedList.find((p) => p.name === 'order')!.schema).toMatchObject({ enum: ['asc', 'desc'], default: 'asc' });
  });

  it('documents both key carriers, the header name following serviceName, and no key on the documents', () => {
    const custom = buildDocument('public', { serviceName: 'gatherly', userEventsVariant: 'typed' });
    expect(custom.components?.securitySchemes).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-gatherly-api-key' }),
      BearerKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(op(custom, '/events/{eventId}').security).toEqual([{ ApiKeyHeader: [] }, { BearerKey: [] }]);
    expect(op(custom, '/openapi.json').security).toEqual([]);
    expect(docs.embed.components?.securitySchemes).toBeUndefined();
  });

  it('gives keyed routes 401, 403 and the 429 headers; Embed responses CORS; every route 500', () => {
    for (const route of table) {
      const responses = op(docs[route.surface], route.path).responses as Record<string, { headers?: Record<string, { required: boolean }> }>;
      expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '500']));
      if (route.auth === 'key') {
        expect(Object.keys(responses)).toEqual(expect.arrayContaining(['401', '403', '429']));
        expect(Object.keys(responses['429']!.headers!).sort()).toEqual(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
      } else {
        expect(Object.keys(responses)).not.toEqual(expect.arrayContaining(['401']));
      }
      for (const response of Object.values(responses)) {
        if (route.surface === 'embed') expect(response.headers?.['Access-Control-Allow-Origin']?.required).toBe(true);
        else expect(response.headers?.['Access-Control-Allow-Origin']).toBeUndefined();
      }
    }
  });

  it('follows the deployment variant of /users/{username}/events', () => {
    const dated = buildDocument('public', { serviceName: 'events', userEventsVariant: 'dated' });
    const names = (doc: Doc) => (op(doc, '/users/{username}/events').parameters as Array<{ name: string }>).map((p) => p.name).sort();
    expect(names(dated)).toEqual(['from', 'since', 'to', 'username']);
    expect(names(docs.public)).toEqual(['from', 'limit', 'offset', 'since', 'to', 'type', 'username']);
  });

  it('has examples that the response schemas accept', () => {
    expect(publicEventSchema.parse((EXAMPLES.getEvent as { data: unknown }).data)).toBeDefined();
    expect(z.array(guestSchema).parse(EXAMPLES.getEventGuests.data)).toHaveLength(2);
    expect(paginationSchema.parse(EXAMPLES.getEventGuests.pagination)).toMatchObject({ limit: 2, offset: 0 });
    expect(embedEventSchema.parse(EXAMPLES.embedGetEvent.data)).toMatchObject({ id: 'evt_jazz01' });
    expect(validationErrorSchema.parse(EXAMPLES.validationError).errors).toHaveLength(2);
    for (const name of ['notFound', 'userNotFound', 'notAuthenticated', 'insufficientScope', 'tooManyRequests', 'internalError'] as const) {
      expect(errorEnvelopeSchema.parse(EXAMPLES[name]).success).toBe(false);
    }
  });

  it('describes a route whose success body is not JSON by its media type, its errors still JSON with CORS', () => {
    const calendar: RouteDefinition = { id: 'embedUserCalendar', surface: 'embed', method: 'GET', path: '/users/{username}/events.ics', handler: 'unused', auth: 'none', tableReads: [] };
    const doc = buildDocument('embed', DEFAULT_DOCUMENT_OPTIONS, [calendar], {
      embedUserCalendar: () => ({
        summary: 'Calendar feed',
        description: 'iCalendar.',
        tag: 'Users',
        params: OPERATIONS.embedGetUserEvents(DEFAULT_DOCUMENT_OPTIONS).params,
        success: { description: 'The feed.', mediaType: 'text/calendar', schema: z.string() },
        errors: { 400: ['validationError'], 404: ['userNotFound'] },
        conditional: true,
      }),
    });
    const responses = op(doc, '/users/{username}/events.ics').responses;
    expect(responses['200'].content).toEqual({ 'text/calendar': { schema: { type: 'string' } } });
    expect(Object.keys(responses['404'].content)).toEqual(['application/json']);
    expect(responses['404'].headers['Access-Control-Allow-Origin'].required).toBe(true);
  });

  it('describes the iCalendar feeds as text/calendar with their download header, and the .ics redirect of the Embed event route', () => {
    for (const path of ['/users/{username}/events.ics', '/events/{eventId}/event.ics']) {
      const responses = op(docs.embed, path).responses;
      expect(Object.keys(responses['200'].content)).toEqual(['text/calendar']);
      expect(responses['200'].content['text/calendar'].schema).toEqual({ type: 'string' });
      expect(responses['200'].headers['Content-Disposition'].required).toBe(true);
      expect(Object.keys(responses)).toEqual(expect.arrayContaining(['304', '400', '404']));
      expect(op(docs.embed, path).parameters.every((p: { in: string }) => p.in === 'path')).toBe(true);
    }
    const redirect = op(docs.embed, '/events/{eventId}').responses['308'];
    expect(redirect.headers.Location.required).toBe(true);
    expect(redirect.content).toBeUndefined();
    expect(typeof EXAMPLES.embedGetEventFeed).toBe('string');
    expect(EXAMPLES.embedGetEventFeed).toMatch(/^BEGIN:VCALENDAR\r\n/);
  });

  it('refuses to describe a route that has no description', () => {
    const orphan: RouteDefinition = { id: 'noDescription', surface: 'public', method: 'GET', path: '/nothing', handler: 'unused', auth: 'key', scope: 'events:read', tableReads: [] };
    expect(() => buildDocument('public', DEFAULT_DOCUMENT_OPTIONS, [orphan], OPERATIONS)).toThrow(/noDescription has no OpenAPI description/);
  });

  it('keeps docs/openapi/ current (npm run openapi)', () => {
    for (const [name, text] of Object.entries(documentFiles())) {
      expect(readFileSync(join(ROOT, 'docs/openapi', name), 'utf8')).toBe(text);
    }
  });

  it('passes Redocly CLI lint with zero errors, for both variants and a custom key header', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pe-openapi-'));
    const files = [
      ['public.json', docs.public],
      ['embed.json', docs.embed],
      ['public-dated.json', buildDocument('public', { serviceName: 'gatherly', userEventsVariant: 'dated' })],
    ] as const;
    for (const [name, doc] of files) writeFileSync(join(dir, name), JSON.stringify(doc));
    // One run per file: the JSON format prints one report per file.
    for (const [name] of files) {
      const result = await run(join(ROOT, 'node_modules/.bin/redocly'), ['lint', '--format=json', join(dir, name)], {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((error: { stdout: string }) => error);
      const report = JSON.parse(result.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
      expect({ name, errors: report.problems.filter((p) => p.severity === 'error') }).toEqual({ name, errors: [] });
      expect(report.totals.errors).toBe(0);
    }
  }, 60_000);
});

describe('parameter metadata is true to the schemas that validate', () => {
  // Every integer query parameter: the documented bounds are accepted, one past them refused, the default applied.
  const integerParams = table.flatMap((route) =>
    (op(docs[route.surface], route.path).parameters as Array<{ name: string; in: string; schema: { type: string; minimum: number; maximum: number; default: number } }> | undefined ?? [])
      .filter((p) => p.in === 'query' && p.schema.type === 'integer')
      .map((p) => [route.id, p.name, p.schema] as const),
  );

  it.each(integerParams)('%s ?%s', (id, name, schema) => {
    const params = OPERATIONS[id as keyof typeof OPERATIONS](DEFAULT_DOCUMENT_OPTIONS).params;
    // Every route's required parameters (discovery needs a place; other routes ignore it).
    const path = { eventId: 'evt_jazz01', username: 'alice', city: 'Lisbon' };
    const parse = (value: string | undefined) => parseParams(params, path, value === undefined ? {} : { [name]: value }) as Record<string, unknown>;
    expect(parse(undefined)[name]).toBe(schema.default);
    for (const n of [schema.minimum, schema.minimum + 1, Math.floor((schema.minimum + Math.min(schema.maximum, 1000)) / 2)]) expect(parse(String(n))[name]).toBe(n);
    expect(parse(String(schema.maximum))[name]).toBe(schema.maximum);
    expect(() => parse(String(schema.minimum - 1))).toThrow(ValidationError);
    if (schema.maximum < Number.MAX_SAFE_INTEGER) expect(() => parse(String(schema.maximum + 1))).toThrow(ValidationError);
  });

  it('enums: every documented value is accepted, anything else refused', () => {
    for (const route of table) {
      const params = OPERATIONS[route.id as keyof typeof OPERATIONS](DEFAULT_DOCUMENT_OPTIONS).params;
      for (const p of (op(docs[route.surface], route.path).parameters ?? []) as Array<{ name: string; schema: { enum?: string[] } }>) {
        for (const value of p.schema.enum ?? []) {
          expect(parseParams(params, { eventId: 'evt_jazz01', username: 'alice' }, { [p.name]: value })[p.name]).toBe(value);
        }
        if (p.schema.enum) expect(() => parseParams(params, { eventId: 'evt_jazz01', username: 'alice' }, { [p.name]: 'nope' })).toThrow(ValidationError);
      }
    }
  });
});
