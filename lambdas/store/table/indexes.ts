/**
 * The table itself: its key attributes, its seven GSIs (each documented by
 * the access pattern it serves) and its CreateTable input, used verbatim by
 * dynalite and mirrored by CDK (lib/events-table.ts). The key builders over
 * it are in table.ts, guest-partitions.ts and place-keys.ts.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { EventItem, RsvpItem } from '../../core/read-items.js';
import type { ProfileEntryItem } from './items.js';

export const PK = 'pk';
export const SK = 'sk';

export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /** What it serves; rendered into docs/data-model.md. */
  readonly purpose: string;
  /**
   * What the index copies of its items: `ALL` (the read needs nothing else),
   * `INCLUDE` (the attributes the reads use, `nonKeyAttributes`: a write that
   * changes only bookkeeping writes nothing to the index) or `KEYS_ONLY` (the
   * read fetches the items by key: an index entry is ~150 B, and an edit that
   * moves no key writes nothing to the index).
   */
  readonly projection: 'ALL' | 'INCLUDE' | 'KEYS_ONLY';
  /** With INCLUDE: the attributes copied besides the table's and the index's keys. */
  readonly nonKeyAttributes?: readonly string[];
}

/** An event's public fields (EventItem), which every index that lists events copies. */
const EVENT_FIELDS = [
  'title',
  'description',
  'cover',
  'location',
  'start_date',
  'end_date',
  'timezone',
  'status',
  'visibility',
  'cost',
  'created_at',
  'links',
  'contributions',
  'creator',
  'sequence',
  'modified_at',
] as const;

/**
 * What event-index copies of its items (an event, its guests, a user by
 * username): what the reads on it use, and nothing of the write side's
 * bookkeeping (`version`, `pending`, `gen`, a reveal's `revealing` mark, the
 * tally's and the feeds' notes, the other indexes' keys). At most 20: the
 * limit of DynamoDB's Projection.NonKeyAttributes
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Projection.html). Why not ALL: an
 * RSVP whose status changes is written twice (the reveal's mark, then the
 * change), and with ALL the mark was a second index write in the event's
 * one event-index partition, 860 write units a second at the change path's
 * 430 changes (docs/data-model.md, "Partitions under the change path").
 * The compile-time check below keeps every field of the event and RSVP
 * shapes in it; test/integration/change-partitions.test.ts checks, on both
 * stores, that an indexed item holds nothing else but named bookkeeping.
 */
export const EVENT_INDEX_ATTRIBUTES = [
  'event_id',
  ...EVENT_FIELDS,
  // A guest (RsvpItem).
  'rsvp_status',
  'rsvp_date',
  'guest',
] as const;

/**
 * What user-events-index and user-created-index copy of their items (a hosted
 * event; a profile entry, which the list reads by its event_id): the same
 * rule as event-index's. Why not ALL: a new event is written, then its
 * tally's note removed once its tally has it, and with ALL that second write
 * was a second index write in its host's list partitions (2.00 units a
 * change, 860 a second in one host's burst: docs/data-model.md).
 */
export const USER_LIST_ATTRIBUTES = ['event_id', ...EVENT_FIELDS, 'member_id', 'type'] as const;

/**
 * Fails to compile when the event or RSVP shape gains a field the index would
 * not copy. `type` is left out (DynamoDB copies at most 20 attributes an
 * index, and these are 20): the sort key says what an entry is (`EVENT`,
 * `GUEST#…`, `USER`), and the reads put it back (repository.ts). A user by
 * username needs nothing but the entry's table key (user-lookup.ts).
 */
type NotCopied = Exclude<keyof EventItem | keyof RsvpItem, (typeof EVENT_INDEX_ATTRIBUTES)[number] | 'type'>;
const everyFieldCopied: [NotCopied] extends [never] ? true : NotCopied = true;
void everyFieldCopied;
type NotListed = Exclude<keyof EventItem | keyof ProfileEntryItem, (typeof USER_LIST_ATTRIBUTES)[number]>;
const everyListedFieldCopied: [NotListed] extends [never] ? true : NotListed = true;
void everyListedFieldCopied;

export const INDEXES = {
  /** Event by id, and its guests in RSVP order (all statuses); a user by username. */
  event: {
    name: 'event-index',
    partitionKey: 'gsi1pk',
    sortKey: 'gsi1sk',
    purpose: 'public event by id; its guests of every status in rsvp_date order; a user by username',
    projection: 'INCLUDE',
    nonKeyAttributes: EVENT_INDEX_ATTRIBUTES,
  },
  /** A user's hosted events and profile events, by start date. */
  userEvents: {
    name: 'user-events-index',
    partitionKey: 'gsi2pk',
    sortKey: 'gsi2sk',
    purpose: "a user's hosted or profile events, in start_date order",
    projection: 'INCLUDE',
    nonKeyAttributes: USER_LIST_ATTRIBUTES,
  },
  /** An event's guests of one RSVP status, in RSVP order. */
  guest: {
    name: 'guest-index',
    partitionKey: 'gsi3pk',
    sortKey: 'gsi3sk',
    purpose: "an event's guests of one rsvp status, in rsvp_date order",
    projection: 'ALL',
  },
  /** The same lists as user-events-index, by creation time, so the created-ordered pages read only what they show. */
  userCreated: {
    name: 'user-created-index',
    partitionKey: 'gsi4pk',
    sortKey: 'gsi4sk',
    purpose: "a user's hosted or profile events, in created_at order",
    projection: 'INCLUDE',
    nonKeyAttributes: USER_LIST_ATTRIBUTES,
  },
  /*
   * Discovery (PRODUCT P17): a public event's place queries, one index per
   * kind of query (placeQueriesOf), each sharded (PLACE_SHARDS) and keyed by
   * local start date-time then id. Keys only: the route reads the event
   * items by key afterwards (docs/finding-events.md).
   */
  /** Events at a country and city, by local start. */
  place: {
    name: 'place-index',
    partitionKey: 'gsi5pk',
    sortKey: 'gsi5sk',
    purpose: 'public events at a country and city, in local start order (keys only)',
    projection: 'KEYS_ONLY',
  },
  /** Events in a country, by local start. */
  country: {
    name: 'country-index',
    partitionKey: 'gsi6pk',
    sortKey: 'gsi6sk',
    purpose: 'public events in a country, in local start order (keys only)',
    projection: 'KEYS_ONLY',
  },
  /** Events in a city (any country), by local start. */
  city: {
    name: 'city-index',
    partitionKey: 'gsi7pk',
    sortKey: 'gsi7sk',
    purpose: 'public events in a city of any country, in local start order (keys only)',
    projection: 'KEYS_ONLY',
  },
} as const satisfies Record<string, IndexDefinition>;

export type IndexName = keyof typeof INDEXES;

/** The table as CreateTable input: used verbatim by dynalite, mirrored by CDK. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const indexAttributes = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [PK, SK, ...indexAttributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: PK, KeyType: 'HASH' },
      { AttributeName: SK, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: Object.values(INDEXES).map((i) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' },
        { AttributeName: i.sortKey, KeyType: 'RANGE' },
      ],
      // ALL and INCLUDE: the index read returns what the route shows, so it
      // needs no second trip to the base table; KEYS_ONLY: the read fetches
      // the items by key (see docs/data-model.md).
      Projection: projectionOf(i),
    })),
  };
}

/** An index's Projection as CreateTable (and CloudFormation) spell it. */
export function projectionOf(index: IndexDefinition): { ProjectionType: IndexDefinition['projection']; NonKeyAttributes?: string[] } {
  return index.projection === 'INCLUDE' ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...(index.nonKeyAttributes ?? [])] } : { ProjectionType: index.projection };
}

/**
 * Time-to-live attribute (epoch seconds): DynamoDB deletes an item some time
 * after it. Set on the local quota's day counters and on derived tombstones,
 * which only matter while an older derivation might still be writing.
 */
export const TTL_ATTRIBUTE = 'expires_at';
