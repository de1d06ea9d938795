/**
 * The generated description files committed under docs/ (`npm run openapi`):
 * both OpenAPI documents for the default settings, and the dataset format as
 * JSON Schema, generated from the zod schemas of lambdas/core/dataset.ts.
 * test/unit/openapi.test.ts and test/unit/dataset-schema.test.ts fail when a
 * committed file differs from what the code generates.
 */
import * as z from 'zod';
import { datasetSchema } from '../lambdas/core/dataset.js';
import { buildDocument } from '../lambdas/openapi/document.js';

export const DEFAULT_DOCUMENT_OPTIONS = { serviceName: 'events', userEventsVariant: 'typed' } as const;

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** docs/openapi/*.json */
export function documentFiles(): Record<string, string> {
  return {
    'public.json': json(buildDocument('public', DEFAULT_DOCUMENT_OPTIONS)),
    'embed.json': json(buildDocument('embed', DEFAULT_DOCUMENT_OPTIONS)),
  };
}

/** docs/dataset.schema.json: what the loader accepts record by record (references and uniqueness are checked on top). */
export function datasetSchemaFile(): string {
  return json({
    ...z.toJSONSchema(datasetSchema, { io: 'input', target: 'draft-2020-12' }),
    title: 'Public Events API source dataset',
    description:
      'Generated from lambdas/core/dataset.ts by `npm run openapi`; see docs/dataset-format.md. The loader also refuses unknown references and duplicates, which JSON Schema cannot express.',
  });
}
