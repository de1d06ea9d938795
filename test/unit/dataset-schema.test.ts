/**
 * docs/dataset.schema.json is generated from the zod dataset schemas and kept
 * current; the demo data and the contract example are valid against it, and a
 * record the loader refuses for its shape is refused by it too.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { validateDataset } from '../../lambdas/core/dataset.js';
import { datasetSchemaFile } from '../../local/schema-files.js';
import { CONTRACT_EXAMPLE, DEMO_FILE } from '../support/fixtures.js';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as typeof addFormatsModule;
const FILE = new URL('../../docs/dataset.schema.json', import.meta.url).pathname;

describe('docs/dataset.schema.json', () => {
  it('is what the zod schemas generate (npm run openapi)', () => {
    expect(readFileSync(FILE, 'utf8')).toBe(datasetSchemaFile());
  });

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(FILE, 'utf8')) as object);

  it.each([DEMO_FILE, CONTRACT_EXAMPLE])('accepts %s, as the loader does', (file) => {
    const data = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    expect(validate(data) ? [] : validate.errors).toEqual([]);
    expect(validateDataset(data).ok).toBe(true);
  });

  it.each([
    ['an unknown field', { users: [{ id: 'usr_a', username: 'a', nickname: 'x' }], events: [] }],
    ['a bad event status', { users: [{ id: 'usr_a', username: 'a' }], events: [{ id: 'evt_a', creator_id: 'usr_a', title: 't', start_date: '2027-01-01T00:00:00Z', timezone: 'UTC', status: 'gone', visibility: 'public', created_at: '2026-01-01T00:00:00Z' }] }],
    ['a username with "@"', { users: [{ id: 'usr_a', username: '@a' }], events: [] }],
  ])('refuses %s, as the loader does', (_, data) => {
    expect(validate(data)).toBe(false);
    expect(validateDataset(data).ok).toBe(false);
  });
});
