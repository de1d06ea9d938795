/** Lambda event factories shared by the handler tests. */
import type { SQSEvent } from 'aws-lambda';

/** An SQS event as the ingest queue's event source delivers it: one record per body, ids `{prefix}{index}`. */
export function sqsEvent(bodies: readonly string[], idPrefix = 'm'): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `${idPrefix}${i}`,
      receiptHandle: `r${i}`,
      body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:ingest',
      awsRegion: 'eu-west-1',
    })),
  };
}
