/**
 * The AWS endpoint the rehearsed functions talk to (AWS_ENDPOINT_URL_DYNAMODB
 * AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_API_GATEWAY point here, and each function signs with its own
 * logical id as access key, so every request names its caller). Each call is
 * evaluated against the caller's role in the template (iam.ts) with what AWS
 * authorizes it on: the action from X-Amz-Target, the table, index or queue
 * ARN, and `dynamodb:LeadingKeys` from the keys in the request. Allowed
 * DynamoDB calls go on to dynalite unchanged; SQS sends go to an in-memory
 * queue; API Gateway's key calls (CreateApiKey, CreateUsagePlanKey,
 * DeleteApiKey) to the in-memory key store the usage plans read
 * (api-keys.ts), evaluated with its ARNs and tag condition keys; Secrets Manager's GetSecretValue
 * (AWS_ENDPOINT_URL_SECRETS_MANAGER) to the template's secrets, with values made for the rehearsal; Lambda's
 * Invoke (AWS_ENDPOINT_URL_LAMBDA: a function invoking another, the ingest the key-management function) to the
 * invoked function's host, evaluated as lambda:InvokeFunction on its ARN. A denied
 * call is answered AccessDeniedException, as AWS does, and recorded.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiKeyStore } from './api-keys.js';
import type { Invocation } from './lambda-host.js';
import { ACCOUNT, REGION, describeDenial, evaluate, type AwsCall, type Denial, type PolicyDocument } from './iam.js';

export interface KeySchema {
  /** Partition key attribute of the table, and of each index by name. */
  readonly hash: string;
  readonly indexes: Record<string, string>;
}

export interface EndpointOptions {
  readonly dynaliteEndpoint: string;
  /** Table physical name → its key schema (from the template). */
  readonly tables: ReadonlyMap<string, KeySchema>;
  /** Function logical id → its role's name and policy documents (resolved). */
  readonly roles: ReadonlyMap<string, { roleName: string; policies: PolicyDocument[] }>;
  /** Queue ARN for a queue URL the function sends to; undefined: not a queue of the template. */
  readonly queueArn: (queueUrl: string) => string | undefined;
  readonly onSend: (queueUrl: string, body: string) => void;
  /** A received message's visibility set by the function (ChangeMessageVisibility); false: no such message in flight. */
  readonly onVisibility: (queueUrl: string, receiptHandle: string, seconds: number) => boolean;
  /** API Gateway's API keys and usage-plan keys (the store the rehearsed usage plans read). */
  readonly apiKeys: ApiKeyStore;
  /** The template's secrets by ARN: the current value and, once rotated, the previous one. */
  readonly secrets: ReadonlyMap<string, { current: string; previous?: string }>;
  /** Runs a function of the template (by logical id) for Lambda's Invoke; undefined: no such function. */
  readonly invoke?: (functionId: string) => ((event: unknown) => Promise<Invocation>) | undefined;
}

export interface AwsEndpoint {
  readonly url: string;
  /** Every call made, allowed or not: `fn action resource`. */
  readonly calls: { fn: string; operation: string; action: string; resource: string; allowed: boolean }[];
  readonly denials: Denial[];
  /** Calls this endpoint cannot interpret (an unknown service or operation): a failure like a denial. */
  readonly unsupported: string[];
  close(): Promise<void>;
}

// `any`: DynamoDB JSON request bodies, read by field name.
type Body = Record<string, any>;

const tableArn = (name: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
/** The string form of an AttributeValue ({S}, {N}, {B}). */
const scalar = (v: Body | undefined) => (v ? String(v.S ?? v.N ?? v.B ?? '') : '');

/** The value `hashAttr = :v` fixes in a key condition (what dynamodb:LeadingKeys sees for a Query). */
function leadingKeyOfCondition(body: Body, hashAttr: string): string[] {
  const names: Record<string, string> = body.ExpressionAttributeNames ?? {};
  for (const clause of String(body.KeyConditionExpression ?? '').split(/\s+AND\s+/i)) {
    const m = /^\s*\(?\s*([#\w]+)\s*=\s*(:\w+)\s*\)?\s*$/.exec(clause);
    if (m && (names[m[1]!] ?? m[1]) === hashAttr) return [scalar(body.ExpressionAttributeValues?.[m[2]!])];
  }
  return [];
}

/** The IAM evaluations one DynamoDB request needs: one per table it touches. */
export function dynamoCalls(fn: string, operation: string, body: Body, tables: ReadonlyMap<string, KeySchema>): AwsCall[] {
  const action = `dynamodb:${operation}`;
  const schema = (name: string) => tables.get(name) ?? { hash: 'pk', indexes: {} };
  const leading = (keys: string[]) => ({ 'dynamodb:LeadingKeys': [...new Set(keys)] });
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
    case 'PutItem': {
      const name = String(body.TableName);
      const key = body.Key ?? body.Item;
      return [{ fn, action, resource: tableArn(name), context: leading([scalar(key?.[schema(name).hash])]) }];
    }
    case 'Query':
    case 'Scan': {
      const name = String(body.TableName);
      const index = body.IndexName as string | undefined;
      const hash = index ? (schema(name).indexes[index] ?? '') : schema(name).hash;
      const keys = operation === 'Query' ? leadingKeyOfCondition(body, hash) : [];
      return [{ fn, action, resource: index ? `${tableArn(name)}/index/${index}` : tableArn(name), context: keys.length ? leading(keys) : {} }];
    }
    case 'BatchGetItem':
      return Object.entries(body.RequestItems ?? {}).map(([name, req]) => ({
        fn,
        action,
        resource: tableArn(name),
        context: leading(((req as Body).Keys as Body[]).map((k) => scalar(k[schema(name).hash]))),
      }));
    case 'BatchWriteItem':
      return Object.entries(body.RequestItems ?? {}).map(([name, reqs]) => ({
        fn,
        action,
        resource: tableArn(name),
        context: leading((reqs as Body[]).map((r) => scalar((r.PutRequest?.Item ?? r.DeleteRequest?.Key)?.[schema(name).hash]))),
      }));
    case 'DescribeTable':
      return [{ fn, action, resource: tableArn(String(body.TableName)), context: {} }];
    default:
      return [];
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function forward(target: string, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  const url = new URL(target);
  const out = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 500, answer.headers);
    answer.pipe(res);
  });
  out.on('error', (e) => {
    res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify({ __type: 'InternalServerError', message: e.message }));
  });
  out.end(body);
}

function awsError(res: ServerResponse, status: number, type: string, message: string, json10 = true): void {
  res.writeHead(status, { 'content-type': json10 ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify({ __type: type, message, Message: message }));
}

export async function startAwsEndpoint(opts: EndpointOptions): Promise<AwsEndpoint> {
  const calls: AwsEndpoint['calls'] = [];
  const denials: Denial[] = [];
  const unsupported: string[] = [];

  // The same call of the same function always gets the same decision: evaluated once.
  const decisions = new Map<string, Promise<{ allowed: boolean; decision: string }>>();
  async function authorize(fn: string, evaluations: AwsCall[], operation: string): Promise<Denial | undefined> {
    const role = opts.roles.get(fn);
    for (const call of evaluations) {
      const key = JSON.stringify([fn, call.action, call.resource, call.context]);
      if (!decisions.has(key)) decisions.set(key, role ? evaluate(call, role.roleName, role.policies) : Promise.resolve({ allowed: false, decision: 'no role in the template' }));
      const decision = await decisions.get(key)!;
      calls.push({ fn, operation, action: call.action, resource: call.resource, allowed: decision.allowed });
      if (!decision.allowed) {
        const denial = { ...call, decision: decision.decision };
        denials.push(denial);
        return denial;
      }
    }
    return undefined;
  }

  // API Gateway's REST-JSON protocol: the operation is the method and path; errors name their type in x-amzn-errortype.
  async function apiGateway(fn: string, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const answer = (status: number, errorType: string | undefined, json: Record<string, unknown> | undefined) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
      res.end(json ? JSON.stringify(json) : '');
    };
    const call = opts.apiKeys.interpret(fn, req.method ?? 'GET', req.url ?? '/', JSON.parse(body.toString('utf8') || '{}') as Body);
    if (!call) {
      unsupported.push(`${fn}: apigateway ${req.method} ${req.url} is not interpreted by the rehearsal`);
      return answer(400, 'BadRequestException', { message: `rehearsal: apigateway ${req.method} ${req.url} not interpreted` });
    }
    const denial = await authorize(fn, call.evaluations, call.operation);
    if (denial) return answer(403, 'AccessDeniedException', { message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/${fn} is not authorized to perform: ${denial.action} on resource: ${denial.resource}` });
    const out = call.run();
    return answer(out.status, out.errorType, out.body);
  }

  // Lambda's Invoke (RequestResponse): POST /2015-03-31/functions/{name or ARN}/invocations; a function error is a 200
  // with X-Amz-Function-Error, as Lambda answers it.
  async function lambdaInvoke(fn: string, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec((req.url ?? '').split('?')[0]!);
    const answer = (status: number, headers: Record<string, string>, text: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...headers });
      res.end(text);
    };
    if (req.method !== 'POST' || !m || String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse') !== 'RequestResponse') {
      unsupported.push(`${fn}: lambda ${req.method} ${req.url} is not interpreted by the rehearsal`);
      return answer(400, { 'x-amzn-errortype': 'InvalidRequestContentException' }, JSON.stringify({ message: 'rehearsal: only a RequestResponse Invoke is interpreted' }));
    }
    const name = decodeURIComponent(m[1]!);
    const target = name.startsWith('arn:') ? name.split(':')[6] ?? '' : name;
    const resource = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${target}`;
    const run = opts.invoke?.(target);
    const denial = await authorize(fn, [{ fn, action: 'lambda:InvokeFunction', resource, context: {} }], 'Invoke');
    if (denial) return answer(403, { 'x-amzn-errortype': 'AccessDeniedException' }, JSON.stringify({ Message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/${fn} is not authorized to perform: lambda:InvokeFunction on resource: ${resource}` }));
    if (!run) return answer(404, { 'x-amzn-errortype': 'ResourceNotFoundException' }, JSON.stringify({ Message: `Function not found: ${resource}` }));
    const out = await run(JSON.parse(body.toString('utf8') || '{}'));
    if (out.ok) return answer(200, {}, out.payload);
    return answer(200, { 'x-amz-function-error': 'Unhandled' }, JSON.stringify({ errorType: out.errorType, errorMessage: out.errorMessage }));
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const credential = /Credential=([^/]+)\/\d{8}\/[^/]+\/([^/]+)\//.exec(String(req.headers.authorization ?? ''));
      const fn = credential?.[1] ?? 'unsigned';
      if (credential?.[2] === 'apigateway') return apiGateway(fn, req, body, res);
      if (credential?.[2] === 'lambda') return lambdaInvoke(fn, req, body, res);
      const [service, operation] = String(req.headers['x-amz-target'] ?? '').split('.');
      const parsed = JSON.parse(body.toString('utf8') || '{}') as Body;
      if (service?.startsWith('DynamoDB_') && operation) {
        const evaluations = dynamoCalls(fn, operation, parsed, opts.tables);
        if (evaluations.length === 0) {
          unsupported.push(`${fn}: dynamodb:${operation} is not interpreted by the rehearsal`);
          return awsError(res, 400, 'com.amazon.coral.service#UnknownOperationException', `rehearsal: dynamodb:${operation} not interpreted`);
        }
        const denial = await authorize(fn, evaluations, operation);
        if (denial) return awsError(res, 400, 'com.amazon.coral.service#AccessDeniedException', `User: arn:aws:sts::${ACCOUNT}:assumed-role/${fn} is not authorized to perform: ${denial.action} on resource: ${denial.resource}`);
        return forward(opts.dynaliteEndpoint, req, body, res);
      }
      if (service === 'secretsmanager' && (operation === 'GetSecretValue' || operation === 'DescribeSecret')) {
        const id = String(parsed.SecretId);
        const arn = [...opts.secrets.keys()].find((a) => a === id || a.split(':').pop()?.replace(/-[A-Za-z0-9]{6}$/, '') === id);
        // AWS authorizes on the secret's ARN (the one in the role's policy), whatever the request names it by. A value's
        // read is recorded with the version stage or id it asks for.
        const action = `secretsmanager:${operation}`;
        const asked = operation === 'GetSecretValue' ? ` ${String(parsed.VersionId ?? parsed.VersionStage ?? 'AWSCURRENT')}` : '';
        const denial = await authorize(fn, [{ fn, action, resource: arn ?? id, context: {} }], `${operation}${asked}`);
        if (denial) return awsError(res, 400, 'AccessDeniedException', `User: arn:aws:sts::${ACCOUNT}:assumed-role/${fn} is not authorized to perform: ${action} on resource: ${id}`, false);
        const secret = arn ? opts.secrets.get(arn) : undefined;
        if (!arn || !secret) return awsError(res, 400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.", false);
        // Each value's version id is its SHA-1 here; the current one is AWSCURRENT, the one before it AWSPREVIOUS.
        const versionOf = (value: string) => createHash('sha1').update(value).digest('hex');
        const staged: [string, string][] = [['AWSCURRENT', secret.current], ...(secret.previous !== undefined ? [['AWSPREVIOUS', secret.previous] as [string, string]] : [])];
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
        if (operation === 'DescribeSecret') return res.end(JSON.stringify({ ARN: arn, Name: arn.split(':').pop(), VersionIdsToStages: Object.fromEntries(staged.map(([stage, value]) => [versionOf(value), [stage]])) }));
        const found = staged.find(([stage, value]) => (parsed.VersionId !== undefined ? versionOf(value) === parsed.VersionId : stage === String(parsed.VersionStage ?? 'AWSCURRENT')));
        if (!found) return awsError(res, 400, 'ResourceNotFoundException', `Secrets Manager can't find the specified secret value for ${asked.trim()}`, false);
        return res.end(JSON.stringify({ ARN: arn, Name: arn.split(':').pop(), VersionId: versionOf(found[1]), SecretString: found[1], VersionStages: [found[0]], CreatedDate: 0 }));
      }
      if (service === 'AmazonSQS' && (operation === 'SendMessage' || operation === 'SendMessageBatch')) {
        const queueUrl = String(parsed.QueueUrl);
        const arn = opts.queueArn(queueUrl);
        if (!arn) return awsError(res, 400, 'com.amazonaws.sqs#QueueDoesNotExist', `no queue ${queueUrl} in the template`);
        const denial = await authorize(fn, [{ fn, action: 'sqs:SendMessage', resource: arn, context: {} }], operation);
        if (denial) return awsError(res, 400, 'com.amazon.coral.service#AccessDeniedException', `not authorized to perform: sqs:SendMessage on resource: ${arn}`);
        const md5 = (s: string) => createHash('md5').update(s).digest('hex');
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        if (operation === 'SendMessage') {
          opts.onSend(queueUrl, String(parsed.MessageBody));
          return res.end(JSON.stringify({ MessageId: randomUUID(), MD5OfMessageBody: md5(String(parsed.MessageBody)) }));
        }
        const entries = (parsed.Entries ?? []) as Body[];
        for (const e of entries) opts.onSend(queueUrl, String(e.MessageBody));
        return res.end(JSON.stringify({ Successful: entries.map((e) => ({ Id: e.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(String(e.MessageBody)) })), Failed: [] }));
      }
      if (service === 'AmazonSQS' && operation === 'ChangeMessageVisibility') {
        const queueUrl = String(parsed.QueueUrl);
        const arn = opts.queueArn(queueUrl);
        if (!arn) return awsError(res, 400, 'com.amazonaws.sqs#QueueDoesNotExist', `no queue ${queueUrl} in the template`);
        const denial = await authorize(fn, [{ fn, action: 'sqs:ChangeMessageVisibility', resource: arn, context: {} }], operation);
        if (denial) return awsError(res, 400, 'com.amazon.coral.service#AccessDeniedException', `not authorized to perform: sqs:ChangeMessageVisibility on resource: ${arn}`);
        const seconds = Number(parsed.VisibilityTimeout);
        // SQS's bounds: 0 to 12 hours.
        if (!Number.isInteger(seconds) || seconds < 0 || seconds > 43_200) return awsError(res, 400, 'com.amazonaws.sqs#InvalidParameterValue', `VisibilityTimeout ${String(parsed.VisibilityTimeout)} is out of range`);
        if (!opts.onVisibility(queueUrl, String(parsed.ReceiptHandle), seconds)) return awsError(res, 400, 'com.amazonaws.sqs#ReceiptHandleIsInvalid', 'The input receipt handle is invalid.');
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        return res.end('{}');
      }
      unsupported.push(`${fn}: ${service}.${operation} is not interpreted by the rehearsal`);
      awsError(res, 400, 'UnknownOperationException', `rehearsal: ${service}.${operation} not interpreted`);
    })().catch((error: unknown) => awsError(res, 500, 'InternalServerError', String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    denials,
    unsupported,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { describeDenial };
