import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { ListTablesCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from './lambdas/store/client.ts';
import { ensureTable } from './local/dynalite.ts';
import { startDynamoDbLocal } from './test/support/dynamodb-local.ts';
const s = await startDynamoDbLocal(process.cwd());
const port = new URL(s.endpoint).port;
const pid = execSync(`pgrep -f 'DynamoDBLocal.jar .*-port ${port}$'`).toString().trim().split('\n')[0];
const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const c = createDocumentClient({ endpoint: s.endpoint });
const N = Number(process.argv[2]);
let t = Date.now(), c0 = cpu();
for (let i = 0; i < N; i++) { await ensureTable(c, `tbl-${i}`); if ((i + 1) % 50 === 0) { console.log('created', i + 1, Date.now() - t, 'ms', cpu() - c0, 'cpu'); t = Date.now(); c0 = cpu(); } }
t = Date.now(); c0 = cpu(); let n = 0;
for (;;) {
  const { TableNames = [] } = await c.send(new ListTablesCommand({}));
  if (!TableNames.length) break;
  for (const name of TableNames) { await c.send(new DeleteTableCommand({ TableName: name })); if (++n % 50 === 0) { console.log('deleted', n, Date.now() - t, 'ms', cpu() - c0, 'cpu'); t = Date.now(); c0 = cpu(); } }
}
c.destroy(); await s.close();
