/**
 * A user's key slots and daily bound (PRODUCT P3): the slot record (the key
 * counter item) names every key that is active or being made (key-rules.ts),
 * changed only by a read and a Put conditional on the revision read (`rev`):
 * the 10-key limit, the daily creates and the deletion's closing are one
 * atomic decision, and a retried change finds its own effect (transitions are
 * idempotent by key id). Below key-records.ts, which releases a slot as a key
 * is retired.
 */
import type { Reservation, Slots } from '../../core/key-rules.js';
import { adopt, close, closableHolders, release, reserve } from '../../core/key-rules.js';
import type { KeyCounterItem } from '../table/items.js';
import { KeyTable } from './key-table.js';
import { keys } from '../table/table.js';

/** Too many concurrent changes of one user's slots in a row; the caller retries (never seen under the stage throttle). */
export class SlotsContended extends Error {
  constructor(userId: string) {
    super(`the key slots of ${userId} kept changing under concurrent requests`);
    this.name = 'SlotsContended';
  }
}

const MAX_SLOT_WRITES = 64;
/** When the slots of a counter written before slots were named are taken to have been reserved (long ago: worth checking). */
const LEGACY_RESERVED_AT = '1970-01-01T00:00:00.000Z';

export class KeySlots extends KeyTable {
  // ---- the slot record -------------------------------------------------------------------------------------------

  /** The user's slots as stored, with what a conditional write of them needs. */
  async readSlots(userId: string): Promise<{ slots: Slots; rev: number | undefined; exists: boolean }> {
    const item = (await this.get(keys.keyCounter(userId))) as KeyCounterItem | undefined;
    if (!item) return { slots: { holders: {} }, rev: undefined, exists: false };
    // A counter written before slots were named: its holders are the keys whose records are not revoked.
    const holders = item.holders ?? Object.fromEntries((await this.records(userId)).filter((r) => !r.revoked).map((r) => [r.key_id, LEGACY_RESERVED_AT]));
    return {
      slots: { holders, day: item.day, created: item.created, closedVersion: item.closed_version, ...(item.holder_versions ? { versions: item.holder_versions } : {}) },
      rev: item.rev,
      exists: true,
    };
  }

  /**
   * Applies `step` to the slots read, and writes its result conditional on
   * nothing having changed since; on a conflict, reads and decides again (a
   * write of ours that landed but lost its answer reads as done: the step is
   * idempotent).
   */
  async changeSlots<T>(userId: string, step: (s: Slots) => { next: Slots | null; result: T }): Promise<T> {
    for (let attempt = 0; attempt < MAX_SLOT_WRITES; attempt++) {
      const read = await this.readSlots(userId);
      const { next, result } = step(read.slots);
      if (!next) return result;
      const rev = (read.rev ?? 0) + 1;
      const item: KeyCounterItem = {
        type: 'KEY_COUNTER',
        user_id: userId,
        active: Object.keys(next.holders).length,
        holders: next.holders,
        rev,
        ...(next.day !== undefined ? { day: next.day, created: next.created ?? 0 } : {}),
        ...(next.closedVersion !== undefined ? { closed_version: next.closedVersion } : {}),
        ...(next.versions && Object.keys(next.versions).length ? { holder_versions: next.versions } : {}),
      };
      const revision = !read.exists ? 'attribute_not_exists(#pk)' : read.rev === undefined ? 'attribute_exists(#pk) AND attribute_not_exists(#rev)' : '#rev = :rev';
      // The stored day only moves forward, whatever a step decided: the rules say so (key-rules.ts, `reserve`), and the
      // write refuses a day older than the stored one (or dropping it) even if a step or an older writer forgot.
      const forward = next.day === undefined ? 'attribute_not_exists(#day)' : '(attribute_not_exists(#day) OR #day <= :day)';
      const values = { ...(read.rev === undefined ? {} : { ':rev': read.rev }), ...(next.day === undefined ? {} : { ':day': next.day }) };
      if (await this.putIf({ ...keys.keyCounter(userId), ...item }, `(${revision}) AND ${forward}`, values, { '#rev': 'rev', '#day': 'day' })) return result;
    }
    throw new SlotsContended(userId);
  }

  reserve(userId: string, keyId: string, at: Date, userVersion: number): Promise<Reservation> {
    return this.changeSlots(userId, (s) => {
      const r = reserve(s, keyId, at, userVersion, this.limits);
      return { next: 'slots' in r ? r.slots : null, result: r };
    });
  }

  releaseSlot(userId: string, keyId: string): Promise<void> {
    return this.changeSlots(userId, (s) => ({ next: release(s, keyId), result: undefined }));
  }

  /**
   * Closes the user's slots at a deletion's version; answers the keys
   * holding one that belong to that deletion (made for the user as it was
   * then or before): a create for the user re-created since keeps its slot.
   */
  closeSlots(userId: string, version: number): Promise<string[]> {
    return this.changeSlots(userId, (s) => ({ next: close(s, version), result: closableHolders(s, version) }));
  }

  /** Reopens a user a resync brought back (a resync keeps a user's version, so the deletion's version does not tell). */
  reopenSlots(userId: string): Promise<void> {
    return this.changeSlots(userId, (s) => {
      if (s.closedVersion === undefined) return { next: null, result: undefined };
      const { closedVersion: _closed, ...open } = s;
      return { next: open, result: undefined };
    });
  }

  /** Slots for keys seeded from a dataset (they count against the limit, and are not creates). */
  adoptSlots(userId: string, keyIds: readonly string[]): Promise<void> {
    return this.changeSlots(userId, (s) => ({ next: adopt(s, keyIds, this.clock()), result: undefined }));
  }
}
