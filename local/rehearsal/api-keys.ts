/**
 * API Gateway's API keys and usage-plan keys, in memory: what a rehearsed
 * function's API Gateway SDK calls create and delete (through the AWS
 * endpoint, after its role allowed them), and what the rehearsed usage plans
 * accept. One store serves both sides, so a key made through the
 * key-management API is a plan key of the Public API at once, and a deleted
 * one is refused at once (INVALID_API_KEY), as in AWS.
 *
 * Only the calls key management makes are interpreted (lambdas/key-admin/usage-plan.ts):
 * CreateApiKey, CreateUsagePlanKey, DeleteApiKey, GetApiKeys (the sweep's, without values); anything else is reported
 * as not interpreted by the endpoint. Each call's IAM evaluation uses the
 * resource ARNs of
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/arn-format-reference.html
 * (`arn:aws:apigateway:{region}::/apikeys`, `…::/apikeys/{id}`,
 * `…::/usageplans/{id}/keys`) and the tag condition keys IAM gives them:
 * aws:RequestTag/* and aws:TagKeys on a create, aws:ResourceTag/* on a delete.
 */
import { randomUUID } from 'node:crypto';
import { REGION, type AwsCall } from './iam.js';

export interface ApiKey {
  readonly id: string;
  readonly value: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly tags: Record<string, string>;
  readonly createdDate: number;
}

/** An answer in API Gateway's REST-JSON shape: status, error type (x-amzn-errortype) or body. */
export interface ApiGatewayAnswer {
  readonly status: number;
  readonly errorType?: string;
  readonly body?: Record<string, unknown>;
}

/** One interpreted call: its IAM evaluations, then what it does if they all allow it. */
export interface ApiGatewayCall {
  readonly operation: string;
  readonly evaluations: AwsCall[];
  readonly run: () => ApiGatewayAnswer;
}

const arn = (path: string) => `arn:aws:apigateway:${REGION}::${path}`;

/**
 * What a CreateApiKey with tags is authorized on besides apigateway:POST on
 * /apikeys: apigateway:PUT on the tags of the collection, the collection's ARN
 * URL-encoded and a literal `*` where the new key's id will be (as AWS names it
 * when it refuses a tagged create: `…::/tags/arn%3Aaws%3Aapigateway%3A{region}%3A%3A%2Frestapis%2F*`
 * for a REST API). A TagResource call on an existing key names the key's own
 * ARN instead, so a policy can tell the two apart.
 */
export const tagOnCreateResource = (region: string): string => {
  const inRegion = (path: string) => `arn:aws:apigateway:${region}::${path}`;
  return inRegion(`/tags/${encodeURIComponent(inRegion('/apikeys/'))}*`);
};
const TAG_ON_CREATE_RESOURCE = tagOnCreateResource(REGION);

export class ApiKeyStore {
  private readonly keys = new Map<string, ApiKey>();
  private readonly members = new Map<string, Set<string>>();
  /**
   * The values of every API key in a usage plan: the set the rehearsed usage
   * plans check a request's key against (RestApiOptions.planKeys). Keys the
   * rehearsal registers for the dataset are added here directly.
   */
  readonly planKeys = new Set<string>();

  /** `plans`: the usage plan ids of the template (a key attached to another is NotFoundException, as in AWS); `clock`: a new key's createdDate. */
  constructor(
    private readonly plans: readonly string[],
    private readonly clock: () => Date = () => new Date(),
  ) {
    for (const p of plans) this.members.set(p, new Set());
  }

  list(): ApiKey[] {
    return [...this.keys.values()];
  }

  /** The call a REST request of the API Gateway SDK makes, or undefined when it is not one key management makes. */
  interpret(fn: string, method: string, path: string, body: Record<string, unknown>): ApiGatewayCall | undefined {
    const segments = path.split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
    if (method === 'POST' && segments.length === 1 && segments[0] === 'apikeys') {
      const tags = (body.tags ?? {}) as Record<string, string>;
      const tagContext = { ...Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:RequestTag/${k}`, v])), ...(Object.keys(tags).length ? { 'aws:TagKeys': Object.keys(tags) } : {}) };
      const id = randomUUID().replace(/-/g, '').slice(0, 10);
      const evaluations: AwsCall[] = [{ fn, action: 'apigateway:POST', resource: arn('/apikeys'), context: tagContext }];
      // Tags on create: also authorized as apigateway:PUT, on the tags of the collection with a literal * for the new id (TAG_ON_CREATE).
      if (Object.keys(tags).length) evaluations.push({ fn, action: 'apigateway:PUT', resource: TAG_ON_CREATE_RESOURCE, context: tagContext });
      return {
        operation: 'CreateApiKey',
        evaluations,
        run: () => {
          const value = typeof body.value === 'string' ? body.value : randomUUID().replace(/-/g, '');
          if (this.list().some((k) => k.value === value)) return { status: 409, errorType: 'ConflictException', body: { message: 'API Key already exists' } };
          const key: ApiKey = { id, value, name: String(body.name ?? ''), enabled: body.enabled === true, tags, createdDate: Math.floor(this.clock().getTime() / 1000) };
          this.keys.set(id, key);
          return { status: 201, body: { ...key } };
        },
      };
    }
    if (method === 'POST' && segments.length === 3 && segments[0] === 'usageplans' && segments[2] === 'keys') {
      const planId = segments[1]!;
      return {
        operation: 'CreateUsagePlanKey',
        evaluations: [{ fn, action: 'apigateway:POST', resource: arn(`/usageplans/${planId}/keys`), context: {} }],
        run: () => {
          const key = this.keys.get(String(body.keyId));
          const members = this.members.get(planId);
          if (!members) return { status: 404, errorType: 'NotFoundException', body: { message: 'Invalid Usage Plan ID specified' } };
          if (!key) return { status: 404, errorType: 'NotFoundException', body: { message: 'Invalid API Key identifier specified' } };
          members.add(key.id);
          if (key.enabled) this.planKeys.add(key.value);
          return { status: 201, body: { id: key.id, type: 'API_KEY', value: key.value, name: key.name } };
        },
      };
    }
    if (method === 'GET' && segments.length === 1 && segments[0] === 'apikeys') {
      // As API Gateway answers: the page under `item` (its wire name; the SDK calls it `items`), `limit` a page (at most
      // 500), `position` the next page's (here the last id of this one: keys are listed by id).
      const query = new URLSearchParams(path.split('?')[1] ?? '');
      const limit = Math.min(500, Math.max(1, Number(query.get('limit') ?? 25)));
      const after = query.get('position') ?? '';
      return {
        operation: 'GetApiKeys',
        evaluations: [{ fn, action: 'apigateway:GET', resource: arn('/apikeys'), context: {} }],
        run: () => {
          const all = this.list().sort((a, b) => (a.id < b.id ? -1 : 1)).filter((k) => k.id > after);
          const page = all.slice(0, limit).map(({ value: _value, ...k }) => k);
          return { status: 200, body: { item: page, ...(all.length > limit ? { position: page.at(-1)!.id } : {}) } };
        },
      };
    }
    if (method === 'DELETE' && segments.length === 2 && segments[0] === 'apikeys') {
      const id = segments[1]!;
      const key = this.keys.get(id);
      // IAM sees the key's tags; a key that does not exist has none.
      const context = Object.fromEntries(Object.entries(key?.tags ?? {}).map(([k, v]) => [`aws:ResourceTag/${k}`, v]));
      return {
        operation: 'DeleteApiKey',
        evaluations: [{ fn, action: 'apigateway:DELETE', resource: arn(`/apikeys/${id}`), context }],
        run: () => {
          if (!key || !this.keys.has(id)) return { status: 404, errorType: 'NotFoundException', body: { message: 'Invalid API Key identifier specified' } };
          this.keys.delete(id);
          for (const m of this.members.values()) m.delete(id);
          this.planKeys.delete(key.value);
          return { status: 202 };
        },
      };
    }
    return undefined;
  }
}

/**
 * Every API Gateway action (the HTTP verbs IAM names them by) on resources
 * that are not this stack's keys: an API key of another product, as it is
 * or tagged with another plan's id, another API and its stage, another usage
 * plan and its keys, the stack's own usage plan itself, and the tags of
 * each (both ways of writing the tagged resource's ARN), each with the
 * stack's plan tag in the request (what a tagging call would carry) and
 * without. A role that may touch only its own keys is refused all of them.
 */
export function foreignApiGatewayCalls(region: string, planId: string, tagKey: string): { action: string; resource: string; context: Record<string, string | string[]> }[] {
  const inRegion = (path: string) => `arn:aws:apigateway:${region}::${path}`;
  const targets = [
    inRegion('/apikeys/otherproductkey1'),
    inRegion('/restapis/abc123'),
    inRegion('/restapis/abc123/stages/prod'),
    inRegion('/usageplans/other'),
    inRegion(`/usageplans/${planId}`),
    inRegion('/usageplans/other/keys'),
    inRegion('/usageplans/other/keys/otherproductkey1'),
  ];
  const resources = targets.flatMap((r) => [r, inRegion(`/tags/${r}`), inRegion(`/tags/${encodeURIComponent(r)}`)]);
  const planTag = { [`aws:RequestTag/${tagKey}`]: planId, 'aws:TagKeys': [tagKey] };
  return ['apigateway:GET', 'apigateway:POST', 'apigateway:PUT', 'apigateway:PATCH', 'apigateway:DELETE'].flatMap((action) =>
    resources.flatMap((resource) => [
      { action, resource, context: planTag },
      { action, resource, context: { ...planTag, [`aws:ResourceTag/${tagKey}`]: 'another-plan' } },
      { action, resource, context: {} },
    ]),
  );
}
