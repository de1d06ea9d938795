/**
 * Holds every end-to-end response to the OpenAPI document of its surface
 * (PRODUCT P15): the status must be documented for the operation, every
 * required response header present and valid, and the body valid against the
 * documented schema (JSON Schema 2020-12, which OpenAPI 3.1 schemas are) or
 * empty when none is documented. The document is the one the server under test
 * serves, so a drift between code and document fails `npm test`.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SURFACES, type Surface } from '../../lambdas/routes.js';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as typeof addFormatsModule;

interface Schema {
  [key: string]: unknown;
}
interface HeaderDoc {
  required?: boolean;
  schema: Schema;
}
interface ResponseDoc {
  headers?: Record<string, HeaderDoc>;
  content?: Record<string, { schema: Schema }>;
}
interface OperationDocument {
  operationId: string;
  responses: Record<string, ResponseDoc>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationDocument>>;
  components?: { schemas?: Record<string, Schema> };
}

interface Loaded {
  doc: OpenApiDocument;
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
}

const documents = new Map<string, Promise<Loaded>>();

/** Forget the documents of a server that has stopped (a later server may reuse its port). */
export function forgetDocuments(origin: string): void {
  for (const key of [...documents.keys()]) if (key.startsWith(`${origin} `)) documents.delete(key);
}

function load(origin: string, surface: Surface): Promise<Loaded> {
  const key = `${origin} ${surface}`;
  let loaded = documents.get(key);
  if (!loaded) {
    loaded = (async () => {
      const res = await fetch(`${origin}${SURFACES[surface]}/openapi.json`);
      if (res.status !== 200) throw new Error(`${origin}${SURFACES[surface]}/openapi.json answered ${res.status}`);
      const doc = (await res.json()) as OpenApiDocument;
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats(ajv);
      // The components are addressable as `#/components/schemas/…` from every schema compiled below.
      ajv.addSchema({ $id: 'doc', components: doc.components ?? {} });
      return { doc, ajv, validators: new Map() };
    })();
    documents.set(key, loaded);
    loaded.catch(() => documents.delete(key));
  }
  return loaded;
}

/** Rewrites local refs to the registered document, so component refs resolve. */
function anchored(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"doc#/')) as Schema;
}

function validator(loaded: Loaded, key: string, schema: Schema): ValidateFunction {
  let v = loaded.validators.get(key);
  if (!v) {
    v = loaded.ajv.compile(anchored(schema));
    loaded.validators.set(key, v);
  }
  return v;
}

function surfaceOf(pathname: string): Surface | undefined {
  return (Object.keys(SURFACES) as Surface[]).find((s) => pathname === SURFACES[s] || pathname.startsWith(`${SURFACES[s]}/`));
}

function matchPath(doc: OpenApiDocument, relative: string): string | undefined {
  const segments = relative.split('/');
  return Object.keys(doc.paths).find((template) => {
    const t = template.split('/');
    return t.length === segments.length && t.every((part, i) => (part.startsWith('{') && part.endsWith('}')) || part === segments[i]);
  });
}

export interface Observed {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Throws, naming the operation and the mismatch, when a response does not
 * match its surface's document. Requests outside both APIs (widget, docs page,
 * the old prefix) are not described by either document and are left alone.
 */
export async function assertMatchesDocument(r: Observed): Promise<void> {
  const url = new URL(r.url);
  const surface = surfaceOf(url.pathname);
  if (!surface) return;
  const loaded = await load(url.origin, surface);
  const where = `${r.method} ${url.pathname}${url.search} → ${r.status}`;
  const fail = (what: string): never => {
    throw new Error(`Response does not match the ${surface} OpenAPI document: ${where}: ${what}`);
  };
  const relative = url.pathname.slice(SURFACES[surface].length);
  const template = matchPath(loaded.doc, relative);
  const operation = template ? loaded.doc.paths[template]?.[r.method.toLowerCase()] : undefined;
  if (!operation && surface === 'embed' && r.method === 'OPTIONS') {
    // The document's info says it: the gateway answers the preflight on any Embed path.
    if (r.status !== 204 || r.headers.get('access-control-allow-origin') !== '*') fail('the Embed preflight must answer 204 with CORS on any path');
    return;
  }
  if (!template || !operation) {
    // Not an operation: the gateway's 404 envelope (and CORS on the Embed API), described as the Error schema.
    if (r.status !== 404) fail('a path or method outside the document must answer 404');
    const errorSchema = loaded.doc.components?.schemas?.Error;
    if (!errorSchema) return fail('no Error schema in components');
    const v = validator(loaded, 'Error', { $ref: '#/components/schemas/Error' });
    if (!v(JSON.parse(r.text))) fail(`body: ${loaded.ajv.errorsText(v.errors)}`);
    if (surface === 'embed' && r.headers.get('access-control-allow-origin') !== '*') fail('no Access-Control-Allow-Origin on an Embed 404');
    return;
  }
  const response = operation.responses[String(r.status)];
  if (!response) return fail(`status ${r.status} is not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`);
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value = r.headers.get(name);
    if (value === null) {
      if (header.required) fail(`required header ${name} missing`);
      continue;
    }
    const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    const v = validator(loaded, `${operation.operationId} ${r.status} header ${name}`, header.schema);
    if (!v(typed)) fail(`header ${name}: ${JSON.stringify(value)} ${loaded.ajv.errorsText(v.errors)}`);
  }
  const media = Object.entries(response.content ?? {});
  if (media.length === 0) {
    if (r.text !== '') fail('a body where none is documented');
    return;
  }
  const contentType = (r.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const entry = media.find(([type]) => type === contentType);
  if (!entry) return fail(`content-type ${contentType} not documented (${media.map(([t]) => t).join(', ')})`);
  const [type, { schema }] = entry;
  const body = type === 'application/json' ? (JSON.parse(r.text) as unknown) : r.text;
  const v = validator(loaded, `${operation.operationId} ${r.status} ${type}`, schema);
  if (!v(body)) fail(`body: ${loaded.ajv.errorsText(v.errors)}`);
}
