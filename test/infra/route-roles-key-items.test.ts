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
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { routes } from '../../lambdas/routes.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { evaluate, type PolicyDocument } from '../../local/rehearsal/iam.js';
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
} as const;
type Family = keyof typeof FAMILIES;
const EVENT_DATA: Family[] = ['event', 'guest shard', 'user', 'tally', 'feed'];
const KEY_FAMILIES: Family[] = ['key slots and records', "authorizer's key", 'create request', "the sweep's progress", 'key pointer (earlier versions)', 'quota (local server)'];

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

/** CloudFormation values as IAM sees them once deployed, the table and the functions named by their logical ids. */
function resolver(tableId: string, functionIds: ReadonlySet<string>) {
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
}

/** Every role of a stage's template with any policy, and what it may do to each family. */
async function reachOf(stage: 'staging' | 'production'): Promise<Map<string, RoleReach>> {
  const { template } = synthesized({ stage });
  const tableId = resources(template, 'AWS::DynamoDB::GlobalTable').find(([id]) => id.startsWith('EventsTable'))![0];
  const functionIds = new Set(resources(template, 'AWS::Lambda::Function').map(([id]) => id));
  const { tableArn, resolve } = resolver(tableId, functionIds);
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
    out.set(role, { table, indexQuery, invokes });
  }
  return out;
}

/** The role's name without CDK's hash: `GetEventRole` for `GetEventRoleA1B2C3D4`. */
const named = (role: string) => role.replace(/[0-9A-F]{8}$/, '');

const none = (): Record<Family, Action[]> => Object.fromEntries(Object.keys(FAMILIES).map((f) => [f, []])) as unknown as Record<Family, Action[]>;
const on = (families: Family[], actions: Action[]): Record<Family, Action[]> => ({ ...none(), ...Object.fromEntries(families.map((f) => [f, actions])) });

/** THE table: what each role may do, per family. A role not named here may do nothing on the table. */
function expected(role: string): RoleReach {
  const route = routes.find((r) => named(role) === `${r.id.charAt(0).toUpperCase()}${r.id.slice(1)}Role` || named(role) === `${r.id}Role`);
  if (route) return { table: on(EVENT_DATA, [...route.tableReads].map((a) => a.replace('dynamodb:', '') as Action)), indexQuery: (route.tableReads as readonly string[]).includes('dynamodb:Query'), invokes: [] };
  // The key's item, then its user's (a deleted user's keys answer 401 from the deletion on): nothing else.
  if (/^Authorizer.*Role$/.test(named(role))) return { table: { ...on(["authorizer's key"], ['GetItem']), user: ['GetItem'] }, indexQuery: false, invokes: [] };
  if (/^KeyAdmin.*Role$/.test(named(role)))
    // Keys belong to user ids: it reads the user's item (is the id a live user) and no index; the sweep reads a page's records at once.
    return { table: { ...on(['key slots and records', "authorizer's key", 'create request', "the sweep's progress"], ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem']), user: ['GetItem'] }, indexQuery: false, invokes: [] };
  if (/^Ingest.*Role$/.test(named(role))) {
    // Event data only; a user's deletion invokes the key-management function, which closes the keys under its own role.
    const applier: Action[] = ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'];
    return { table: { ...on(EVENT_DATA, applier), feed: [...applier, 'DeleteItem'] }, indexQuery: false, invokes: ['KeyAdminFunction'] };
  }
  return { table: none(), indexQuery: false, invokes: [] };
}

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
    }
    expect(differences).toEqual([]);
    // And so, in so many words: key items are the authorizer's and the key manager's; the ingest reads none of them.
    const reachingKeys = [...reach].filter(([, r]) => KEY_FAMILIES.some((f) => r.table[f].length > 0)).map(([role]) => named(role).replace(/[A-Z0-9]*Role$/, '').replace(/Function$/, ''));
    expect(reachingKeys.sort()).toEqual([expect.stringMatching(/^Authorizer/), expect.stringMatching(/^KeyAdmin/)]);
    const ingest = [...reach].find(([role]) => /^Ingest.*Role$/.test(named(role)))![1];
    expect(KEY_FAMILIES.flatMap((f) => ingest.table[f])).toEqual([]);
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
