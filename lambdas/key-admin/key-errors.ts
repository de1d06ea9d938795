/**
 * The key manager's refusals (key-manager.ts): one code each, and the
 * request field it is about, so the key-management API (handler.ts) and the
 * operator CLI (local/cli/keys.ts) name the field in their answers.
 */

export type KeyErrorCode =
  | 'UNKNOWN_USER'
  | 'LIMIT_REACHED'
  | 'CREATE_LIMIT'
  | 'UNKNOWN_KEY'
  | 'ALREADY_REVOKED'
  | 'REVOKED_WHILE_CREATING'
  | 'BAD_SCOPE'
  | 'BAD_NAME'
  | 'BAD_CURSOR'
  | 'IDEMPOTENCY_MISMATCH'
  | 'IN_PROGRESS'
  | 'BUSY'
  | 'AMBIGUOUS_USER';

/** The request field each refusal is about, for messages that name it. */
export const ERROR_FIELDS: Record<KeyErrorCode, string> = {
  UNKNOWN_USER: 'userId',
  LIMIT_REACHED: 'userId',
  CREATE_LIMIT: 'userId',
  UNKNOWN_KEY: 'keyId',
  ALREADY_REVOKED: 'keyId',
  REVOKED_WHILE_CREATING: 'keyId',
  BAD_SCOPE: 'scopes',
  BAD_NAME: 'name',
  BAD_CURSOR: 'cursor',
  IDEMPOTENCY_MISMATCH: 'idempotencyKey',
  IN_PROGRESS: 'idempotencyKey',
  BUSY: 'userId',
  AMBIGUOUS_USER: 'username',
};

export class KeyManagementError extends Error {
  readonly field: string;
  constructor(
    readonly code: KeyErrorCode,
    message: string,
    /** The key the refusal is about, when there is one (for the audit line). */
    readonly keyId?: string,
  ) {
    super(message);
    this.name = 'KeyManagementError';
    this.field = ERROR_FIELDS[code];
  }
}
