/**
 * Least privilege on the table, for every role of both stages' synthesized
 * templates (issue 45, k5 and item 4; PRODUCT P3: no role but the
 * authorizer's and the key manager's reads a key record). Each role's
 * policies are evaluated by the project's IAM evaluator (iam-simulate,
 * local/rehearsal/iam.ts, the rehearsal's) for every item family of the base
 * table (event data, feeds, key management's) × every DynamoDB data action,
 * with the dynamodb:LeadingKeys the call would carry, and the answers are
 * compared with the table below, so a new route or statement that widens a
 * role's reach fails here, naming the role, the family and the action.
 *
 * The ingest reaches no key item: a user's deletion closes their keys by
 * invoking the key-management function's `close` task
 * (lambdas/ingest/key-closer.ts), so its row holds event data only, and the
 * second table below shows that invoking that one function is what it may
 * do instead (lambda:InvokeFunction, evaluated for every role on every
 * function of the template). The indexes hold no key management item (no
 * key item has an index key: checked on the items the key manager writes,
 * below), so Query on an index reaches event data only.
 *
 * Webhooks (PRODUCT P18, lib/webhooks.ts) add their families (a webhook and
 * its delivery state, a scope's webhook list) and three tables more: which
 * queues each role may send to, and who may use the webhooks' secrets key,
 * evaluated with the key's own policy as KMS evaluates it (the key policy
 * first: an IAM policy counts only where the key policy lets the account's
 * policies in, which this one does not), with the encryption context the
 * secret box seals with and with another.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { routes } from '../../lambdas/routes.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { evaluate, evaluateAs, type PolicyDocument } from '../../local/rehearsal/iam.js';
import { demoDataset } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { resources, synthesized } from './support.js';

const ACCOUNT = '123456789012';

/** A sample partition key of each item family of the base table (lambdas/store/table/table.ts, lambdas/store/feeds/feed.ts). */
const FAMILIES = {
  event: 'EVENT#evt_launch',
  'guest shard': 'EVENT#evt_launch#G3',
  user: 'USER#usr_frank',
  tally: 'TALLY#USER#usr_frank#HOSTED',
  feed: 'FEED#events',
  'key slots and records': 'USERKEYS#usr_frank',
  "authorizer's key": `APIKEY#${'0'.repeat(64)}`,
  'create request': 'KEYREQ#usr_frank#idem-0000000001',
  "the sweep's progress": 'KEYSWEEP#PLAN',
  'key pointer (earlier versions)': 'KEYID#key_0000000000',
  'quota (local server)': 'QUOTA#key_0000000000',
  webhook: 'WEBHOOK#wh_00000000000000000000',
  "scope's webhooks": 'WHSCOPE#EVENTS',
} as const;
type Family = keyof typeof FAMILIES;
const EVENT_DATA: Family[] = ['event', 'guest shard', 'user', 'tally', 'feed'];
const KEY_FAMILIES: Family[] = ['key slots and records', "authorizer's key", 'create request', "the sweep's progress", 'key pointer (earlier versions)', 'quota (local server)'];
const WEBHOOK_FAMILIES: Family[] = ['webhook', "scope's webhooks"];

/**
 * Every IAM action of DynamoDB that reads or writes items (a transaction is
 * authorized as the GetItem, PutItem, ... it holds; Scan and PartiQL carry no
 * leading key: a ForAllValues condition alone would let them through).
 */
const ACTIONS = [
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'ConditionCheckItem',
  'PartiQLSelect',
  'PartiQLInsert',
  'PartiQLUpdate',
  'PartiQLDelete',
] as const;
type Action = (typeof ACTIONS)[number];

/** A function's ARN once deployed, named by its logical id. */
const functionArn = (id: string) => `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${id}`;

/** ARNs as deployed for the other resources a policy names: each named by its logical id. */
const arns: Record<string, (id: string) => string> = {
  'AWS::SQS::Queue': (id) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${id}`,
  'AWS::KMS::Key': (id) => `arn:aws:kms:us-east-1:${ACCOUNT}:key/${id}`,
  'AWS::IAM::Role': (id) => `arn:aws:iam::${ACCOUNT}:role/${id}`,
};

/** CloudFormation values as IAM sees them once deployed, the table, the functions, queues, keys and roles named by their logical ids. */
function resolver(tableId: string, functionIds: ReadonlySet<string>, types: ReadonlyMap<string, string>) {
  const tableArn = `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/${tableId}`;
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value && typeof value === 'object') {
      const v = value as Record<string, unknown>;
      if (v.Ref === 'AWS::Partition') return 'aws';
      if (v.Ref === 'AWS::Region') return 'us-east-1';
      if (v.Ref === 'AWS::AccountId') return ACCOUNT;
      if (typeof v.Ref === 'string') return `REF(${v.Ref})`;
      if (Array.isArray(v['Fn::GetAtt'])) {
        const [id, attr] = v['Fn::GetAtt'] as [string, string];
        if (attr === 'Arn' && functionIds.has(id)) return functionArn(id);
        const arn = attr === 'Arn' ? arns[types.get(id) ?? '']?.(id) : undefined;
        if (arn) return arn;
        return id === tableId && attr === 'Arn' ? tableArn : `GETATT(${id}.${attr})`;
      }
      if (Array.isArray(v['Fn::Join'])) {
        const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
        return (parts.map(resolve) as string[]).join(sep);
      }
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
    }
    return value;
  };
  return { tableArn, resolve };
}

interface RoleReach {
  /** Per family, the actions the role may take on its items of the base table. */
  table: Record<Family, Action[]>;
  /** Whether it may Query an index. */
  indexQuery: boolean;
  /** The functions of the template it may invoke (lambda:InvokeFunction), by name without CDK's hash. */
  invokes: string[];
  /** The queues of the template it may send to (sqs:SendMessage), by name without CDK's hash. */
  sends: string[];
  /** What it may do with the webhooks' secrets key, the key's policy evaluated with its own: `Encrypt`, `Decrypt`; `(any context)` when another encryption context is let through too. */
  secretsKey: string[];
}

/** The encryption context the secret box seals a webhook's secret with (lambdas/store/webhooks/secret-box.ts), and others. */
const SEALED: Record<string, string | string[]> = { 'kms:EncryptionContextKeys': ['webhook_id'] };
/** No context, another key, the webhook's id with another key beside it. */
const OTHER_CONTEXTS: Record<string, string | string[]>[] = [{}, { 'kms:EncryptionContextKeys': ['tenant'] }, { 'kms:EncryptionContextKeys': ['webhook_id', 'tenant'] }];
const KMS_USES = ['Encrypt', 'Decrypt', 'ReEncryptFrom', 'ReEncryptTo', 'GenerateDataKey', 'CreateGrant'] as const;

/** Every role of a stage's template with any policy, and what it may do to each family. */
async function reachOf(stage: 'staging' | 'production'): Promise<Map<string, RoleReach>> {
  const { template } = synthesized({ stage });
  const tableId = resources(template, 'AWS::DynamoDB::GlobalTable').find(([id]) => id.startsWith('EventsTable'))![0];
  const functionIds = new Set(resources(template, 'AWS::Lambda::Function').map(([id]) => id));
  const types = new Map(Object.entries(template.toJSON().Resources as Record<string, { Type: string }>).map(([id, r]) => [id, r.Type]));
  const { tableArn, resolve } = resolver(tableId, functionIds, types);
  const queueIds = [...types].filter(([, type]) => type === 'AWS::SQS::Queue').map(([id]) => id).sort();
  const [[keyId, key]] = resources(template, 'AWS::KMS::Key') as [[string, { Properties: Record<string, unknown> }]];
  const keyPolicy = resolve(key.Properties.KeyPolicy) as PolicyDocument;
  const keyArn = arns['AWS::KMS::Key']!(keyId);
  const docs = new Map<string, PolicyDocument[]>();
  for (const [, p] of resources(template, 'AWS::IAM::Policy')) {
    for (const r of p.Properties.Roles as { Ref: string }[]) docs.set(r.Ref, [...(docs.get(r.Ref) ?? []), resolve(p.Properties.PolicyDocument) as PolicyDocument]);
  }
  // Inline policies of a role (CDK's own custom resources) count too.
  for (const [id, r] of resources(template, 'AWS::IAM::Role')) {
    for (const p of (r.Properties.Policies ?? []) as { PolicyDocument: unknown }[]) docs.set(id, [...(docs.get(id) ?? []), resolve(p.PolicyDocument) as PolicyDocument]);
    for (const m of (r.Properties.ManagedPolicyArns ?? []) as unknown[]) if (JSON.stringify(m).includes('Dynamo')) throw new Error(`${id} has a managed DynamoDB policy: not evaluated here`);
  }
  const allowed = async (role: string, action: string, resource: string, context: Record<string, string[]>) => {
    const { allowed: yes, decision } = await evaluate({ fn: role, action: action.includes(':') ? action : `dynamodb:${action}`, resource, context }, role, docs.get(role)!);
    if (decision.startsWith('simulation error')) throw new Error(`${role} ${action}: ${decision}`);
    return yes;
  };
  const out = new Map<string, RoleReach>();
  for (const role of [...docs.keys()].sort()) {
    const table = Object.fromEntries(Object.keys(FAMILIES).map((f) => [f, [] as Action[]])) as Record<Family, Action[]>;
    for (const [family, pk] of Object.entries(FAMILIES) as [Family, string][]) {
      for (const action of ACTIONS) {
        // What DynamoDB puts in the request context: the partition keys the call names (none for a Scan or PartiQL).
        const context: Record<string, string[]> = action === 'Scan' || action.startsWith('PartiQL') ? {} : { 'dynamodb:LeadingKeys': [pk] };
        if (await allowed(role, action, tableArn, context)) table[family].push(action);
      }
    }
    const indexQuery = (await Promise.all(Object.values(INDEXES).map((i) => allowed(role, 'Query', `${tableArn}/index/${i.name}`, {})))).some(Boolean);
    const invokes: string[] = [];
    for (const id of [...functionIds].sort()) if (await allowed(role, 'lambda:InvokeFunction', functionArn(id), {})) invokes.push(named(id));
    const sends: string[] = [];
    for (const id of queueIds) if (await allowed(role, 'sqs:SendMessage', arns['AWS::SQS::Queue']!(id), {})) sends.push(named(id));
    const secretsKey: string[] = [];
    const principal = `arn:aws:sts::${ACCOUNT}:assumed-role/${role}/${role}`;
    const onKey = async (action: string, context: Record<string, string | string[]>) => {
      const { allowed: yes, decision } = await evaluateAs(principal, { action: `kms:${action}`, resource: keyArn, context }, docs.get(role)!, role, keyPolicy);
      if (decision.startsWith('simulation error')) throw new Error(`${role} kms:${action}: ${decision}`);
      return yes;
    };
    for (const action of KMS_USES) {
      if (await onKey(action, SEALED)) secretsKey.push(action);
      for (const context of OTHER_CONTEXTS) if (await onKey(action, context)) secretsKey.push(`${action} (any context)`);
    }
    out.set(role, { table, indexQuery, invokes, sends, secretsKey: [...new Set(secretsKey)] });
  }
  return out;
}

/** The role's name without CDK's hash: `GetEventRole` for `GetEventRoleA1B2C3D4`. */
const named = (role: string) => role.replace(/[0-9A-F]{8}$/, '');

const none = (): Record<Family, Action[]> => Object.fromEntries(Object.keys(FAMILIES).map((f) => [f, []])) as unknown as Record<Family, Action[]>;
const on = (families: Family[], actions: Action[]): Record<Family, Action[]> => ({ ...none(), ...Object.fromEntries(families.map((f) => [f, actions])) });
/** Rows of the table side by side: each family's actions from the part that names it. */
const merged = (...parts: Partial<Record<Family, Action[]>>[]): Record<Family, Action[]> => Object.assign(none(), ...parts.map((p) => Object.fromEntries(Object.entries(p).filter(([, a]) => a!.length))));

/** THE table: what each role may do, per family, and with the queues and the secrets' key. A role not named here may do nothing. */
function expected(role: string): RoleReach {
  const nothing = { indexQuery: false, invokes: [], sends: [], secretsKey: [] };
  const route = routes.find((r) => named(role) === `${r.id.charAt(0).toUpperCase()}${r.id.slice(1)}Role` || named(role) === `${r.id}Role`);
  if (route) return { ...nothing, table: on(EVENT_DATA, [...route.tableReads].map((a) => a.replace('dynamodb:', '') as Action)), indexQuery: (route.tableReads as readonly string[]).includes('dynamodb:Query') };
  // The key's item, then its user's (a deleted user's keys answer 401 from the deletion on): nothing else.
  if (/^Authorizer.*Role$/.test(named(role))) return { ...nothing, table: { ...on(["authorizer's key"], ['GetItem']), user: ['GetItem'] } };
  if (/^KeyAdmin.*Role$/.test(named(role)))
    // Keys belong to user ids: it reads the user's item (is the id a live user). Its webhooks' items; a webhook's start
    // reads its feed's positions as a pull does (Query, the event index for a guest feed's event), never a member's item.
    return {
      table: merged(
        // The sweep reads a page's records at once: BatchGetItem on key records only (KeyRecordsAtOnce).
        on(['key slots and records'], ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem']),
        on(["authorizer's key", 'create request', "the sweep's progress"], ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem']),
        on(['event', 'guest shard', 'tally', 'feed'], ['Query']),
        { user: ['GetItem', 'Query'] },
        on(WEBHOOK_FAMILIES, ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem']),
      ),
      indexQuery: true,
      invokes: [],
      sends: ['WebhooksWakeUps'],
      secretsKey: ['Encrypt'],
    };
  if (/^Ingest.*Role$/.test(named(role))) {
    // Event data only; a user's deletion invokes the key-management function, which closes the keys under its own role.
    const applier: Action[] = ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'];
    return { ...nothing, table: { ...on(EVENT_DATA, applier), feed: [...applier, 'DeleteItem'] }, invokes: ['KeyAdminFunction'], sends: ['IngestQueue'] };
  }
  // The fan-out reads which webhooks a scope has, and wakes them (or queues the rest of the scope); Lambda sends the
  // description of a stream batch it gave up on to the failures queue with the function's role.
  if (/^WebhooksFanOut.*Role$/.test(named(role))) return { ...nothing, table: on(["scope's webhooks"], ['Query']), sends: ['WebhooksFanOutQueue', 'WebhooksStreamFailures', 'WebhooksWakeUps'] };
  // The delivery function reads a webhook's page as a pull does and writes its delivery state, nothing else.
  if (/^WebhooksDelivery.*Role$/.test(named(role)))
    return {
      table: merged(on(EVENT_DATA, ['BatchGetItem', 'Query']), { webhook: ['GetItem', 'UpdateItem'], "scope's webhooks": ['UpdateItem'] }),
      indexQuery: true,
      invokes: [],
      sends: ['WebhooksWakeUps'],
      secretsKey: ['Decrypt'],
    };
  return { ...nothing, table: none() };
}

const WRITES: Action[] = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'PartiQLInsert', 'PartiQLUpdate', 'PartiQLDelete'];

describe.each(['staging', 'production'] as const)('every role of the %s template, every item family × every DynamoDB action', (stage) => {
  it('reaches exactly what the table says: no role but the authorizer and the key manager touches a key item', async () => {
    const reach = await reachOf(stage);
    // Each route's role is in the template (else the table would check nothing of it).
    const routeRoles = [...reach.keys()].filter((r) => routes.some((route) => route.tableReads.length && named(r).toLowerCase() === `${route.id}role`.toLowerCase()));
    expect(routeRoles.length).toBe(routes.filter((r) => r.tableReads.length).length);
    const differences: string[] = [];
    for (const [role, actual] of reach) {
      const want = expected(role);
      for (const family of Object.keys(FAMILIES) as Family[]) {
        const got = actual.table[family].join(' ') || '-';
        const should = [...want.table[family]].sort((a, b) => ACTIONS.indexOf(a) - ACTIONS.indexOf(b)).join(' ') || '-';
        if (got !== should) differences.push(`${named(role)} on ${family}: may ${got}, the table says ${should}`);
      }
      if (actual.indexQuery !== want.indexQuery) differences.push(`${named(role)} Query on an index: ${actual.indexQuery}, the table says ${want.indexQuery}`);
      if (actual.invokes.join(' ') !== want.invokes.join(' ')) differences.push(`${named(role)} may invoke ${actual.invokes.join(' ') || '-'}, the table says ${want.invokes.join(' ') || '-'}`);
      if (actual.sends.join(' ') !== want.sends.join(' ')) differences.push(`${named(role)} may send to ${actual.sends.join(' ') || '-'}, the table says ${want.sends.join(' ') || '-'}`);
      if (actual.secretsKey.join(' ') !== want.secretsKey.join(' ')) differences.push(`${named(role)} may use the secrets key for ${actual.secretsKey.join(' ') || '-'}, the table says ${want.secretsKey.join(' ') || '-'}`);
    }
    expect(differences).toEqual([]);
    // And so, in so many words: key items are the authorizer's and the key manager's; the ingest reads none of them.
    const reachingKeys = [...reach].filter(([, r]) => KEY_FAMILIES.some((f) => r.table[f].length > 0)).map(([role]) => named(role).replace(/[A-Z0-9]*Role$/, '').replace(/Function$/, ''));
    expect(reachingKeys.sort()).toEqual([expect.stringMatching(/^Authorizer/), expect.stringMatching(/^KeyAdmin/)]);
    const ingest = [...reach].find(([role]) => /^Ingest.*Role$/.test(named(role)))![1];
    expect(KEY_FAMILIES.flatMap((f) => ingest.table[f])).toEqual([]);
    // Only the ingest writes event data; the delivery function writes only webhooks' delivery state; only it opens a secret.
    const writing = (families: Family[]) => [...reach].filter(([, r]) => families.some((f) => r.table[f].some((a) => WRITES.includes(a)))).map(([role]) => named(role));
    expect(writing(EVENT_DATA)).toEqual([expect.stringMatching(/^Ingest/)]);
    const delivery = [...reach].find(([role]) => /^WebhooksDelivery.*Role$/.test(named(role)))![1];
    expect((Object.keys(FAMILIES) as Family[]).filter((f) => delivery.table[f].some((a) => WRITES.includes(a)))).toEqual(WEBHOOK_FAMILIES);
    expect([...reach].filter(([, r]) => r.secretsKey.some((u) => u.startsWith('Decrypt'))).map(([role]) => named(role))).toEqual([expect.stringMatching(/^WebhooksDelivery/)]);
  }, 120_000);
});

describe('the indexes hold no key management item', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await startTestStore(demoDataset());
  });
  afterAll(async () => store?.close());

  it('no key item the key manager writes (slots, records, authorizer items, requests) carries an index key', async () => {
    const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T12:00:00.000Z') });
    const made = await mgr.createOnce({ idempotencyKey: 'index-check-0001', userId: 'usr_frank', name: 'laptop' });
    await mgr.revoke('usr_frank', made.info.keyId);
    const items = (await store.client.send(new ScanCommand({ TableName: store.tableName, ConsistentRead: true }))).Items ?? [];
    const keyItems = items.filter((i) => /^(USERKEYS|APIKEY|KEYREQ|KEYID|QUOTA)#/.test(String(i.pk)));
    expect(keyItems.length).toBeGreaterThan(3);
    const indexAttributes = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);
    expect(keyItems.filter((i) => indexAttributes.some((a) => a in i)).map((i) => `${String(i.pk)}|${String(i.sk)}`)).toEqual([]);
  });
});
