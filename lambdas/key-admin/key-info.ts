/**
 * What the key manager shows of a key (never the key, never its hash), and
 * the list's opaque cursor: the sort key of the last record listed, without
 * its prefix, as base64url.
 */
import type { Scope } from '../core/dataset.js';
import type { KeyRecordItem } from '../store/table/items.js';
import { KEY_RECORD_PREFIX } from '../store/table/table.js';
import { KeyManagementError } from './key-errors.js';

/** What may be shown about a key: never the key, never its hash. */
export interface KeyInfo {
  keyId: string;
  name: string;
  scopes: Scope[];
  createdAt: string | null;
  revoked: boolean;
  revokedAt: string | null;
}

export interface KeyPage {
  keys: KeyInfo[];
  /** Where the next page starts; null on the last. */
  cursor: string | null;
}

/** What a create with an idempotency key answers: the key the first time, only its id on a retry. */
export type CreateOnceResult = ({ created: true; key: string; info: KeyInfo } | { created: false; info: KeyInfo }) & {
  /** The user the key belongs to (for the audit line). */
  userId: string;
};

export function infoOf(r: KeyRecordItem): KeyInfo {
  return { keyId: r.key_id, name: r.name ?? '', scopes: r.scopes ?? [], createdAt: r.created_at ?? null, revoked: r.revoked, revokedAt: r.revoked_at ?? null };
}

export function encodeCursor(sortKey: string): string {
  return Buffer.from(sortKey.slice(KEY_RECORD_PREFIX.length), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const keyId = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^key_[0-9A-Za-z]{1,64}$/.test(keyId)) throw new KeyManagementError('BAD_CURSOR', 'cursor must be a cursor from an earlier answer');
  return `${KEY_RECORD_PREFIX}${keyId}`;
}
