/**
 * What the tests of work bounded per invocation share (issue 57, item 4):
 * the demo dataset's table on an in-process dynalite, a client whose calls
 * are counted and cut past a budget (a Lambda's timeout, as so many calls
 * at a given latency: a call past it fails as Lambda cuts a function off),
 * and API Gateway's API keys of the plan in memory, paged as GetApiKeys
 * pages them.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { validateDataset } from '../../lambdas/core/dataset.js';
import { planKeyName, type PlanKeyEntry, type PlanKeys } from '../../lambdas/store/keys/key-store.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { directClient } from './direct-dynalite.js';
import { demoDataset } from './fixtures.js';
import { startInProcessDynalite, type InProcessStore } from './in-process-dynalite.js';

/** An in-process store holding `table` loaded with the demo dataset. */
export async function demoStore(table: string): Promise<InProcessStore> {
  const store = await startInProcessDynalite();
  const client = directClient(store.call);
  await ensureTable(client, table);
  const checked = validateDataset(demoDataset());
  if (!checked.ok) throw new Error(checked.problems.join('; '));
  await writeDataset(client, table, checked.dataset);
  return store;
}

/** A client of the store whose calls of one invocation are counted (`reset` starts the next) and fail past `limit`. */
export function budgetedClient(store: Pick<InProcessStore, 'call'>, limit: number, timedOut: string): { client: DynamoDBDocumentClient; calls: () => number; reset: () => void } {
  let calls = 0;
  const client = directClient(store.call, async (_command, _input, send) => {
    if (++calls > limit) throw new Error(timedOut);
    return send();
  });
  return { client, calls: () => calls, reset: () => void (calls = 0) };
}

/** The plan's API keys in memory, listed in id order (the order they were made), `pageSize` a page; calls to it counted. */
export function pagedPlan(clock: () => Date, pageSize = 500) {
  const live = new Map<string, PlanKeyEntry>();
  const counts = { calls: 0 };
  let n = 0;
  const planKeys: PlanKeys = {
    create: async (keyId, _usage, userId) => {
      const id = `apikey${String(++n).padStart(6, '0')}`;
      live.set(id, { id, name: planKeyName(userId, keyId), createdAt: clock() });
      return id;
    },
    attach: async () => undefined,
    remove: async (id) => {
      counts.calls++;
      live.delete(id);
    },
    listPage: async (position) => {
      counts.calls++;
      const ids = [...live.keys()].sort().filter((id) => !position || id > position);
      const page = ids.slice(0, pageSize).map((id) => live.get(id)!);
      return { entries: page, ...(ids.length > pageSize ? { position: page.at(-1)!.id } : {}) };
    },
  };
  return { planKeys, live, counts };
}
