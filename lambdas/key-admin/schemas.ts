/**
 * What the key-management API accepts, as zod schemas: the one place its
 * input rules live (the handler parses with them; the admin client's types
 * come from them). Each refusal names its field. A key name's rule is the key
 * manager's own (lambdas/core/key-rules.ts), so the API and `npm run keys`
 * refuse the same names with the same words.
 */
import * as z from 'zod';
import { SCOPES } from '../core/dataset.js';
import { checkKeyName } from '../core/key-rules.js';
import { USER_ID_PATTERN } from '../core/ids.js';
import { MAX_LIST_PAGE } from './key-manager.js';

/** Idempotency keys: what a UUID, a ULID or any opaque token of the web product looks like. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The user a key belongs to: the web product's user id, never a username
 * (usernames change and are reused; two users can briefly share one).
 */
const userId = z.string({ error: 'userId is required (the user id, usr_…)' }).regex(USER_ID_PATTERN, { error: 'userId must be a user id (usr_…), not a username' });

export const createKeyBody = z.strictObject({
  idempotencyKey: z.string({ error: 'idempotencyKey is required' }).regex(IDEMPOTENCY_KEY_PATTERN, {
    error: 'idempotencyKey must be 8-128 characters of letters, digits, ".", "_", ":" or "-" (a UUID works)',
  }),
  userId,
  name: z.string({ error: 'name is required' }).check((ctx) => {
    const checked = checkKeyName(ctx.value);
    if (!checked.ok) ctx.issues.push({ code: 'custom', message: checked.message, input: ctx.value });
  }),
  scopes: z
    .array(z.enum(SCOPES, { error: `scopes must each be one of ${SCOPES.join(', ')}` }), { error: 'scopes must be an array' })
    .min(1, { error: `scopes needs at least one of ${SCOPES.join(', ')}` })
    .optional(),
});

export type CreateKeyBody = z.input<typeof createKeyBody>;

export const KEY_ID_PATTERN = /^key_[0-9A-Za-z]{1,64}$/;
export const keyIdParam = z.string().regex(KEY_ID_PATTERN, { error: 'keyId must look like key_…' });
export const userIdParam = userId;

/** `GET /users/{userId}/keys?limit=&cursor=`: one page of the user's keys (other query parameters are ignored, as on every route: PRODUCT P6). */
export const listQuery = z.object({
  limit: z.coerce
    .number({ error: `limit must be an integer from 1 to ${MAX_LIST_PAGE}` })
    .int({ error: `limit must be an integer from 1 to ${MAX_LIST_PAGE}` })
    .min(1, { error: `limit must be an integer from 1 to ${MAX_LIST_PAGE}` })
    .max(MAX_LIST_PAGE, { error: `limit must be an integer from 1 to ${MAX_LIST_PAGE}` })
    .optional(),
  cursor: z.string().min(1, { error: 'cursor must be a cursor from an earlier answer' }).max(256, { error: 'cursor must be a cursor from an earlier answer' }).optional(),
});
