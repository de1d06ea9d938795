/**
 * The rules of PRODUCT P14 as a pure function: a dataset and a sequence of
 * changes → the dataset the source now describes. The table the applier keeps
 * (lambdas/store/changes/applier.ts) must hold exactly the read model of
 * `fold(d0, changes)`; the property tests hold it to that.
 *
 * - Per-entity versions: a change whose version is not greater than the last
 *   one applied to its entity (deletions included) is stale and changes nothing.
 * - Deletes cascade and stick: the deleted entity keeps its version (a
 *   tombstone); deleting an event removes its RSVPs, deleting a user removes the
 *   events they created (with those events' RSVPs) and their own RSVPs. Every
 *   entity removed by a cascade keeps its version too.
 * - An upsert whose references do not resolve (creator; RSVP event and user)
 *   is not applied: it waits. An RSVP without a user is accepted and stores
 *   nothing.
 */
import type { Change } from './changes.js';
import type { Dataset, SourceEvent, SourceRsvp, SourceUser } from './dataset.js';

export type Outcome = { result: 'applied' } | { result: 'stale'; storedVersion: number } | { result: 'waiting'; missing: string };

interface Versioned<T> {
  version: number;
  /** undefined: a tombstone. */
  record?: T;
}

export interface FoldState {
  users: Map<string, Versioned<SourceUser>>;
  events: Map<string, Versioned<SourceEvent>>;
  /** Keyed by rsvpKey(eventId, userId). */
  rsvps: Map<string, Versioned<SourceRsvp & { user_id: string }>>;
  apiKeys: Dataset['api_keys'];
}

export const rsvpKey = (eventId: string, userId: string): string => `${eventId}\u0000${userId}`;

/** Records loaded from a dataset have version 0. */
export function initialState(d0: Dataset): FoldState {
  return {
    users: new Map(d0.users.map((u) => [u.id, { version: 0, record: u }])),
    events: new Map(d0.events.map((e) => [e.id, { version: 0, record: e }])),
    rsvps: new Map(
      (d0.rsvps ?? []).flatMap((r) => (r.user_id == null ? [] : [[rsvpKey(r.event_id, r.user_id), { version: 0, record: { ...r, user_id: r.user_id } }] as const])),
    ),
    apiKeys: d0.api_keys,
  };
}

const live = <T>(v: Versioned<T> | undefined): T | undefined => v?.record;

function tombstone<T>(map: Map<string, Versioned<T>>, key: string): void {
  const v = map.get(key);
  if (v?.record !== undefined) map.set(key, { version: v.version });
}

function deleteEvent(state: FoldState, eventId: string): void {
  tombstone(state.events, eventId);
  for (const [key, v] of state.rsvps) if (v.record?.event_id === eventId) tombstone(state.rsvps, key);
}

/** The key and the map a change is about, for the version rule. */
function versionOf(state: FoldState, change: Change): number | undefined {
  switch (change.type) {
    case 'user.upserted':
      return state.users.get(change.user.id)?.version;
    case 'user.deleted':
      return state.users.get(change.user_id)?.version;
    case 'event.upserted':
      return state.events.get(change.event.id)?.version;
    case 'event.deleted':
      return state.events.get(change.event_id)?.version;
    case 'rsvp.upserted':
      return change.rsvp.user_id == null ? undefined : state.rsvps.get(rsvpKey(change.rsvp.event_id, change.rsvp.user_id))?.version;
    case 'rsvp.deleted':
      return state.rsvps.get(rsvpKey(change.event_id, change.user_id))?.version;
  }
}

/** Applies one change in place and says what became of it. */
export function applyChange(state: FoldState, change: Change): Outcome {
  const stored = versionOf(state, change);
  if (stored !== undefined && change.version <= stored) return { result: 'stale', storedVersion: stored };
  switch (change.type) {
    case 'user.upserted':
      state.users.set(change.user.id, { version: change.version, record: change.user });
      return { result: 'applied' };
    case 'user.deleted': {
      const id = change.user_id;
      state.users.set(id, { version: change.version });
      for (const [eventId, v] of state.events) if (v.record?.creator_id === id) deleteEvent(state, eventId);
      for (const [key, v] of state.rsvps) if (v.record?.user_id === id) tombstone(state.rsvps, key);
      return { result: 'applied' };
    }
    case 'event.upserted':
      if (!live(state.users.get(change.event.creator_id))) return { result: 'waiting', missing: `user ${change.event.creator_id}` };
      state.events.set(change.event.id, { version: change.version, record: change.event });
      return { result: 'applied' };
    case 'event.deleted':
      state.events.set(change.event_id, { version: change.version });
      deleteEvent(state, change.event_id);
      return { result: 'applied' };
    case 'rsvp.upserted': {
      const { rsvp } = change;
      if (rsvp.user_id == null) return { result: 'applied' }; // anonymous: accepted, nothing stored
      if (!live(state.events.get(rsvp.event_id))) return { result: 'waiting', missing: `event ${rsvp.event_id}` };
      if (!live(state.users.get(rsvp.user_id))) return { result: 'waiting', missing: `user ${rsvp.user_id}` };
      state.rsvps.set(rsvpKey(rsvp.event_id, rsvp.user_id), { version: change.version, record: { ...rsvp, user_id: rsvp.user_id } });
      return { result: 'applied' };
    }
    case 'rsvp.deleted':
      state.rsvps.set(rsvpKey(change.event_id, change.user_id), { version: change.version });
      return { result: 'applied' };
  }
}

/** The dataset the state describes: live records only (tombstones are bookkeeping). */
export function stateToDataset(state: FoldState): Dataset {
  const records = <T>(map: Map<string, Versioned<T>>): T[] => [...map.values()].flatMap((v) => (v.record === undefined ? [] : [v.record]));
  return {
    users: records(state.users),
    events: records(state.events),
    rsvps: records(state.rsvps),
    ...(state.apiKeys ? { api_keys: state.apiKeys } : {}),
  };
}

/** fold(d0, changes) of PRODUCT P14, with the outcome of every change. */
export function fold(d0: Dataset, changes: readonly Change[]): { dataset: Dataset; outcomes: Outcome[]; state: FoldState } {
  const state = initialState(d0);
  const outcomes = changes.map((c) => applyChange(state, c));
  return { dataset: stateToDataset(state), outcomes, state };
}
