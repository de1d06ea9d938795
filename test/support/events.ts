/** Lambda event factories shared by the handler tests. */
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, SQSEvent } from 'aws-lambda';

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

/** An API Gateway REST proxy event for a GET of `resource` with the given path and query parameters. */
export function proxyEvent(resource: string, pathParameters: Record<string, string>, query: Record<string, string> | null = null): APIGatewayProxyEvent {
  return {
    resource,
    path: resource,
    httpMethod: 'GET',
    headers: {},
    multiValueHeaders: {},
    pathParameters,
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {} as APIGatewayProxyEvent['requestContext'],
  };
}

/** An API Gateway REQUEST authorizer event for a GET of a Public event; `over` replaces any field. */
export function authorizerEvent(over: Partial<APIGatewayRequestAuthorizerEvent> = {}): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/GET/api/public/v1/events/evt_jazz01',
    resource: '/api/public/v1/events/{eventId}',
    path: '/api/public/v1/events/evt_jazz01',
    httpMethod: 'GET',
    headers: {},
    multiValueHeaders: {},
    pathParameters: {},
    queryStringParameters: {},
    multiValueQueryStringParameters: {},
    stageVariables: {},
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
    ...over,
  };
}
