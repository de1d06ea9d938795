/**
 * What the key-management API accepts, as zod schemas: the one place its
 * input rules live (the handler parses with them; the admin client's types
 * come from them). Each refusal names its field.
 */
import * as z from 'zod';
import { SCOPES } from '../core/dataset.js';
import { MAX_NAME_LENGTH } from './key-manager.js';

/** Idempotency keys: what a UUID, a ULID or any opaque token of the web product looks like. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

export const createKeyBody = z.strictObject({
  idempotencyKey: z.string({ error: 'idempotencyKey is required' }).regex(IDEMPOTENCY_KEY_PATTERN, {
    error: 'idempotencyKey must be 8-128 characters of letters, digits, ".", "_", ":" or "-" (a UUID works)',
  }),
  username: z.string({ error: 'username is required' }).min(1, { error: 'username is required' }).max(64, { error: 'username is at most 64 characters' }),
  name: z
    .string({ error: 'name is required' })
    .trim()
    .min(1, { error: `name must be 1-${MAX_NAME_LENGTH} characters` })
    .max(MAX_NAME_LENGTH, { error: `name must be 1-${MAX_NAME_LENGTH} characters` }),
  scopes: z
    .array(z.enum(SCOPES, { error: `scopes must each be one of ${SCOPES.join(', ')}` }), { error: 'scopes must be an array' })
    .min(1, { error: `scopes needs at least one of ${SCOPES.join(', ')}` })
    .optional(),
});

export type CreateKeyBody = z.input<typeof createKeyBody>;

export const keyIdParam = z.string().regex(/^key_[0-9A-Za-z]{1,64}$/, { error: 'keyId must look like key_…' });
