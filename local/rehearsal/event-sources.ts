/**
 * The template's event source mappings, run as Lambda runs them: each takes
 * batches from its source and invokes its function, under the function's
 * role (the poller's reads of the queue or the stream are evaluated against
 * it too, as Lambda makes them with the function's execution role).
 *
 * - SQS, standard: batches of BatchSize in the queue's order; partial batch
 *   responses where the mapping reports them; a failed message back on the
 *   queue, dead-lettered after the queue's maxReceiveCount.
 * - SQS, FIFO (SQS developer guide, "FIFO queue delivery logic"; Lambda
 *   developer guide, "Configuring scaling behavior for SQS event source
 *   mappings"): a message group's messages in order, and none of a group
 *   while one of it is in flight or invisible; a batch may hold several
 *   groups. Messages stay in their place: a failed one keeps its group's
 *   front.
 * - A DynamoDB stream (streams.ts): from the mapping's last position,
 *   records past its filter only, batches of BatchSize; a failed batch is
 *   split in halves (BisectBatchOnFunctionError) and retried up to
 *   MaximumRetryAttempts, then described on its on-failure queue.
 *
 * Time: with `clock`, a message made invisible (its visibility set by the
 * function, or a failure's default, the queue's VisibilityTimeout) comes
 * back once the rehearsal's clock reaches it, and a drain ends when nothing
 * is due; without, the queue has no clock and a failed message is given
 * out again at the next round, as if its time had passed, but for a FIFO
 * message the function made invisible (a webhook's retry): that one waits
 * for the next drain, so that a retry is one attempt a drain, not a spin.
 */
import { randomUUID } from 'node:crypto';
import type { AwsEndpoint, SentMessage } from './aws-endpoint.js';
import { REGION } from './iam.js';
import type { LambdaHost } from './lambda-host.js';
import { filterPatterns, passesFilters, type StreamRecord, type TableStream } from './streams.js';
import { Template, TemplateError, type Json } from './template.js';

export interface SqsMessage {
  readonly messageId: string;
  readonly body: string;
  receiveCount: number;
  /** The visibility the function last set for it (ChangeMessageVisibility), in seconds. */
  visibilityTimeout?: number;
  readonly groupId?: string;
  readonly dedupId?: string;
  /** Clock mode: given out again no earlier than this (ms). */
  visibleAt?: number;
  /** FIFO: in a batch being processed (it stays in its place meanwhile). */
  inFlight?: boolean;
  /** When it was sent (ms of the rehearsal's clock): its SentTimestamp. */
  sentAt?: number;
  /** As a function sent it (SendMessage's DelaySeconds on a standard queue; recorded, not waited). */
  readonly delaySeconds?: number;
  /** As sent (SendMessage's MessageAttributes), delivered in the event's records as Lambda delivers them. */
  readonly messageAttributes?: Record<string, { DataType: string; StringValue?: string }>;
  /** Without a clock: made invisible by the function, it waits for the next drain. */
  heldForNextDrain?: boolean;
}

/** SQS FIFO's deduplication interval: a message whose id was sent within it is accepted and dropped. */
const DEDUP_MS = 5 * 60_000;

interface QueueMapping {
  kind: 'sqs' | 'fifo';
  id: string;
  queueId: string;
  fn: string;
  batchSize: number;
  partial: boolean;
  maxReceiveCount: number;
  deadLetterId?: string;
  visibilitySeconds: number;
}

interface StreamMapping {
  kind: 'stream';
  id: string;
  fn: string;
  batchSize: number;
  patterns: Json[];
  bisect: boolean;
  maxRetries: number;
  onFailureQueueId?: string;
  /** The next record of the stream this mapping reads. */
  position: number;
  /** Batches failed and waiting to be tried again: records with their tries so far. */
  retrying: { records: StreamRecord[]; tries: number }[];
}

export interface DrainResult {
  batches: number;
  failures: number;
  deadLettered: number;
}

export interface EventSourceContext {
  template: Template;
  queues: Map<string, SqsMessage[]>;
  hosts: ReadonlyMap<string, LambdaHost>;
  endpoint: () => AwsEndpoint;
  stream?: TableStream;
  now: () => Date;
  clock: boolean;
  invocations: string[];
  /** Messages of a batch being processed, by receipt handle (ChangeMessageVisibility names them). */
  inFlight: Map<string, SqsMessage>;
}

export class EventSources {
  readonly functionErrors: string[] = [];
  private readonly mappings: (QueueMapping | StreamMapping)[];
  /** FIFO deduplication ids seen, by queue: when each was accepted (ms). */
  private readonly dedup = new Map<string, Map<string, number>>();

  constructor(private readonly c: EventSourceContext) {
    const t = c.template;
    this.mappings = t.ofType('AWS::Lambda::EventSourceMapping').map(([mid, m]) => {
      const fn = Template.targetOf(m.Properties?.FunctionName);
      const source = Template.targetOf(m.Properties?.EventSourceArn);
      const [, attribute] = [m.Properties?.EventSourceArn?.['Fn::GetAtt'] ?? []].flat() as string[];
      if (!fn || !source) throw new TemplateError(mid, 'a mapping needs a function and a source of this template');
      const batchSize = Number(t.prop(mid, 'BatchSize') ?? 10);
      const partial = ((t.prop(mid, 'FunctionResponseTypes') ?? []) as string[]).includes('ReportBatchItemFailures');
      if (attribute === 'StreamArn') {
        if (!c.stream) throw new TemplateError(mid, 'the table has no stream');
        if (partial) throw new TemplateError(mid, 'partial batch responses of a stream are not rehearsed');
        const onFailure = t.prop(mid, 'DestinationConfig.OnFailure.Destination') as string | undefined;
        return {
          kind: 'stream' as const,
          id: mid,
          fn,
          batchSize,
          patterns: filterPatterns(t.prop(mid, 'FilterCriteria'), mid),
          bisect: t.prop(mid, 'BisectBatchOnFunctionError') === true,
          maxRetries: Number(t.prop(mid, 'MaximumRetryAttempts') ?? Infinity),
          onFailureQueueId: onFailure ? [...c.queues.keys()].find((q) => t.getAtt(q, 'Arn', mid) === onFailure) : undefined,
          position: 0,
          retrying: [],
        };
      }
      if (!c.queues.has(source)) throw new TemplateError(mid, 'only SQS queues and DynamoDB streams of this template are rehearsed as event sources');
      const redrive = t.prop(source, 'RedrivePolicy') as Json;
      return {
        kind: t.prop(source, 'FifoQueue') === true ? ('fifo' as const) : ('sqs' as const),
        id: mid,
        queueId: source,
        fn,
        batchSize,
        partial,
        maxReceiveCount: Number(redrive?.maxReceiveCount ?? Infinity),
        deadLetterId: redrive ? [...c.queues.keys()].find((q) => t.getAtt(q, 'Arn', mid) === redrive.deadLetterTargetArn) : undefined,
        visibilitySeconds: Number(t.prop(source, 'VisibilityTimeout') ?? 30),
      };
    });
  }

  private isFifo(queueId: string): boolean {
    return this.c.template.prop(queueId, 'FifoQueue') === true;
  }

  /** A message sent to a queue (by a function, or a producer): refused as SQS refuses it, or deduplicated on a FIFO queue. */
  send(queueId: string, m: SentMessage): { type: string; message: string } | void {
    const queue = this.c.queues.get(queueId)!;
    const sentAt = this.c.now().getTime();
    if (!this.isFifo(queueId)) return void queue.push({ messageId: randomUUID(), body: m.body, receiveCount: 0, sentAt, delaySeconds: m.delaySeconds, messageAttributes: m.attributes });
    if (!m.groupId) return { type: 'MissingParameter', message: 'The request must contain the parameter MessageGroupId.' };
    if (m.delaySeconds !== undefined) return { type: 'InvalidParameterValue', message: 'Value for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.' };
    const contentBased = this.c.template.prop(queueId, 'ContentBasedDeduplication') === true;
    if (!m.dedupId && !contentBased) return { type: 'InvalidParameterValue', message: 'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly' };
    const byGroup = this.c.template.prop(queueId, 'DeduplicationScope') === 'messageGroup';
    const key = `${byGroup ? m.groupId : ''}\n${m.dedupId ?? m.body}`;
    const seen = (this.dedup.get(queueId) ?? this.dedup.set(queueId, new Map()).get(queueId)!);
    const now = this.c.now().getTime();
    const at = seen.get(key);
    // Accepted and not delivered, as SQS does within its deduplication interval.
    if (at !== undefined && now - at < DEDUP_MS) return;
    seen.set(key, now);
    queue.push({ messageId: randomUUID(), body: m.body, receiveCount: 0, groupId: m.groupId, dedupId: m.dedupId, sentAt });
  }

  private visible(m: SqsMessage): boolean {
    return this.c.clock ? (m.visibleAt ?? 0) <= this.c.now().getTime() : !m.heldForNextDrain;
  }

  /** The next batch a queue mapping would get, or none (nothing visible; every FIFO group with messages blocked). */
  private take(mapping: QueueMapping): SqsMessage[] {
    const queue = this.c.queues.get(mapping.queueId)!;
    if (mapping.kind === 'sqs') {
      const batch: SqsMessage[] = [];
      for (let i = 0; i < queue.length && batch.length < mapping.batchSize; ) {
        if (this.visible(queue[i]!)) batch.push(...queue.splice(i, 1));
        else i++;
      }
      return batch;
    }
    const blocked = new Set<string>();
    const batch: SqsMessage[] = [];
    for (const m of queue) {
      if (batch.length >= mapping.batchSize) break;
      if (blocked.has(m.groupId!)) continue;
      if (m.inFlight || !this.visible(m)) {
        blocked.add(m.groupId!);
        continue;
      }
      batch.push(m);
    }
    for (const m of batch) m.inFlight = true;
    return batch;
  }

  private nextStreamBatch(mapping: StreamMapping): { records: StreamRecord[]; tries: number } | undefined {
    const retry = mapping.retrying.shift();
    if (retry) return retry;
    const all = this.c.stream!.records;
    const records: StreamRecord[] = [];
    while (mapping.position < all.length && records.length < mapping.batchSize) {
      const r = all[mapping.position++]!;
      // Lambda drops what the filter does not match before any invocation.
      if (passesFilters(mapping.patterns, r)) records.push(r);
    }
    return records.length ? { records, tries: 0 } : undefined;
  }

  /** The poller's own calls with the function's role (the event source's grants). */
  private async poll(mapping: QueueMapping | StreamMapping): Promise<void> {
    const t = this.c.template;
    const calls =
      mapping.kind === 'stream'
        ? ['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords'].map((action) => ({ action, resource: Template.streamArn(t.ofType('AWS::DynamoDB::GlobalTable')[0]?.[0] ?? t.ofType('AWS::DynamoDB::Table')[0]![0]) }))
        : ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'].map((action) => ({ action, resource: t.getAtt(mapping.queueId, 'Arn', mapping.id) }));
    await this.c.endpoint().check(mapping.fn, calls.map((x) => ({ fn: mapping.fn, ...x, context: {} })), `poller of ${mapping.id}`);
  }

  /** `maxBatches`: stop after that many queue batches (a test that looks between deliveries). */
  async drain(opts: { maxBatches?: number } = {}): Promise<DrainResult> {
    const result: DrainResult = { batches: 0, failures: 0, deadLettered: 0 };
    for (const queue of this.c.queues.values()) for (const m of queue) m.heldForNextDrain = false;
    for (let round = 0; round < 10_000 && result.batches < (opts.maxBatches ?? Infinity); round++) {
      let ran = false;
      for (const mapping of this.mappings) {
        if (mapping.kind === 'stream') {
          const batch = this.nextStreamBatch(mapping);
          if (!batch) continue;
          ran = true;
          await this.poll(mapping);
          await this.runStream(mapping, batch);
          continue;
        }
        const batch = this.take(mapping);
        if (!batch.length) continue;
        ran = true;
        await this.poll(mapping);
        result.batches++;
        await this.runQueue(mapping, batch, result);
        // One batch at a time, in the order the template lists its mappings, then round again.
        break;
      }
      if (!ran) break;
    }
    return result;
  }

  private async invoke(fn: string, event: unknown): Promise<{ ok: true; payload: string } | { ok: false }> {
    this.c.invocations.push(fn);
    const out = await this.c.hosts.get(fn)!.invoke(event);
    if (!out.ok) this.functionErrors.push(`${fn}: ${out.errorType}: ${out.errorMessage}`);
    return out.ok ? out : { ok: false };
  }

  private async runQueue(mapping: QueueMapping, batch: SqsMessage[], result: DrainResult): Promise<void> {
    const now = this.c.now().getTime();
    const queueArn = this.c.template.getAtt(mapping.queueId, 'Arn', mapping.queueId);
    for (const m of batch) this.c.inFlight.set(m.messageId, m);
    const event = {
      Records: batch.map((m) => ({
        messageId: m.messageId,
        receiptHandle: m.messageId,
        body: m.body,
        attributes: {
          ApproximateReceiveCount: String(++m.receiveCount),
          SentTimestamp: String(m.sentAt ?? now),
          SenderId: 'rehearsal',
          ApproximateFirstReceiveTimestamp: String(now),
          ...(m.groupId ? { MessageGroupId: m.groupId, MessageDeduplicationId: m.dedupId ?? '', SequenceNumber: '0' } : {}),
        },
        messageAttributes: Object.fromEntries(
          Object.entries(m.messageAttributes ?? {}).map(([k, a]) => [k, { stringValue: a.StringValue, dataType: a.DataType, stringListValues: [], binaryListValues: [] }]),
        ),
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: REGION,
      })),
    };
    for (const m of batch) m.visibilityTimeout = undefined;
    const out = await this.invoke(mapping.fn, event);
    let failed: SqsMessage[];
    if (!out.ok) failed = batch;
    else if (mapping.partial) {
      const ids = new Set((((JSON.parse(out.payload) as Json)?.batchItemFailures ?? []) as Json[]).map((f) => String(f.itemIdentifier)));
      failed = batch.filter((m) => ids.has(m.messageId));
    } else failed = [];
    for (const m of batch) this.c.inFlight.delete(m.messageId);
    result.failures += failed.length;
    const queue = this.c.queues.get(mapping.queueId)!;
    const after = this.c.now().getTime();
    for (const m of batch) {
      m.inFlight = false;
      if (!failed.includes(m)) {
        if (mapping.kind === 'fifo') queue.splice(queue.indexOf(m), 1);
        continue;
      }
      m.visibleAt = after + (m.visibilityTimeout ?? mapping.visibilitySeconds) * 1000;
      m.heldForNextDrain = mapping.kind === 'fifo' && (m.visibilityTimeout ?? 0) > 0;
      if (m.receiveCount >= mapping.maxReceiveCount && mapping.deadLetterId) {
        if (mapping.kind === 'fifo') queue.splice(queue.indexOf(m), 1);
        this.c.queues.get(mapping.deadLetterId)!.push(m);
        result.deadLettered++;
      } else if (mapping.kind === 'sqs') queue.push(m);
    }
  }

  private async runStream(mapping: StreamMapping, batch: { records: StreamRecord[]; tries: number }): Promise<void> {
    const tableId = this.c.template.ofType('AWS::DynamoDB::GlobalTable')[0]?.[0] ?? this.c.template.ofType('AWS::DynamoDB::Table')[0]![0];
    const event = { Records: batch.records.map((r) => ({ ...r, eventVersion: '1.1', eventSource: 'aws:dynamodb', awsRegion: REGION, eventSourceARN: Template.streamArn(tableId) })) };
    const out = await this.invoke(mapping.fn, event);
    if (out.ok) return;
    const tries = batch.tries + 1;
    if (tries <= mapping.maxRetries) {
      const halves = mapping.bisect && batch.records.length > 1 ? [batch.records.slice(0, batch.records.length / 2), batch.records.slice(batch.records.length / 2)] : [batch.records];
      mapping.retrying.unshift(...halves.map((records) => ({ records, tries })));
      return;
    }
    if (!mapping.onFailureQueueId) return;
    // What Lambda sends its on-failure destination for a stream: the batch's shard and sequence numbers, not its records.
    const description = { requestContext: { condition: 'RetryAttemptsExhausted', functionArn: this.c.template.getAtt(mapping.fn, 'Arn', mapping.id) }, DDBStreamBatchInfo: { startSequenceNumber: batch.records[0]!.dynamodb.SequenceNumber, endSequenceNumber: batch.records.at(-1)!.dynamodb.SequenceNumber, batchSize: batch.records.length, streamArn: Template.streamArn(tableId) } };
    const denial = await this.c.endpoint().check(mapping.fn, [{ fn: mapping.fn, action: 'sqs:SendMessage', resource: this.c.template.getAtt(mapping.onFailureQueueId, 'Arn', mapping.id), context: {} }], 'on-failure destination');
    if (!denial) this.send(mapping.onFailureQueueId, { body: JSON.stringify(description) });
  }
}
