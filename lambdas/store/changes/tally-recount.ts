/**
 * Keeps the tally summaries (tally.ts) equal to what they count, under any
 * number of concurrent appliers and with redeliveries, without transactions.
 *
 * A summary is never adjusted by a delta (a retried delta counts twice); it is
 * recounted from its children: a day from its entries, a month from its days,
 * a year from its months. Concurrent recounts are ordered by a ticket: each
 * recount first takes the summary's next ticket, then reads its children
 * (consistently), then stores its count only if no recount with a later ticket
 * has stored one. Whoever changed a child takes a ticket after that change, so
 * the recount holding the last ticket read every change made before any
 * ticket was taken: the count that stays is the right one. A recount that
 * crashes leaves its change's `tally_pending` (applier.ts), so a later
 * derivation recounts again. Recounts of one summary in one process go one at
 * a time, a later request joining the one waiting its turn (tally-traffic.ts).
 */
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../table/conditions.js';
import { PK, SK } from '../table/table.js';
import { countLiveEntries, readSummaries } from '../reads/tally-queries.js';
import { childRange, LEVELS, summariesOf, ticketKey, TALLY_SUMMARY_TYPE, TALLY_TICKET_TYPE, type TallyKey } from '../table/tally.js';
import { TallyTraffic } from './tally-traffic.js';

export class TallyRecounter {
  readonly traffic: TallyTraffic;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Called once per item written, for the applier's write count. */
    private readonly onWrite: () => void = () => undefined,
  ) {
    this.traffic = TallyTraffic.of(client, tableName);
  }

  /** Recounts every summary the given entries count in: days first, then months, then years. */
  async recount(entries: readonly TallyKey[]): Promise<void> {
    for (let level = 0; level < LEVELS.length; level++) {
      const summaries = new Map(entries.map((e) => summariesOf(e)[level]!).map((k) => [`${k.pk}\u0000${k.sk}`, k]));
      // One at a time (at most two per level): an applier makes one call at a time where the caller asks it to.
      for (const k of summaries.values()) await this.traffic.recount(k, () => this.recountOne(k));
    }
  }

  private async recountOne(summary: TallyKey): Promise<void> {
    const key = { [PK]: summary.pk, [SK]: summary.sk };
    const tickets = ticketKey(summary);
    const ticketed = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [PK]: tickets.pk, [SK]: tickets.sk },
        UpdateExpression: 'ADD ticket :one SET #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': TALLY_TICKET_TYPE },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    this.onWrite();
    const ticket = Number(ticketed.Attributes?.ticket);
    const count = await this.countChildren(summary);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #count = :count, counted = :ticket, #type = :type',
          ConditionExpression: 'attribute_not_exists(counted) OR counted < :ticket',
          ExpressionAttributeNames: { '#count': 'count', '#type': 'type' },
          ExpressionAttributeValues: { ':count': count, ':ticket': ticket, ':type': TALLY_SUMMARY_TYPE },
        }),
      );
      this.onWrite();
    } catch (error) {
      // A recount that took a later ticket read later and has stored its count.
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async countChildren(summary: TallyKey): Promise<number> {
    const range = childRange(summary);
    const target = { client: this.client, tableName: this.tableName, consistent: true };
    if (range.entries) return countLiveEntries(target, range.pk, range);
    return (await readSummaries(target, range.pk, range)).reduce((n, i) => n + (i.count ?? 0), 0);
  }
}
