/**
 * docs/webhooks.md's commands as a reader runs them, against `npm start --
 * --allow-loopback-webhooks` (npm and all, a process of its own): an
 * operator's `npm run keys -- webhooks` create, list and get; a delivery of
 * `data:apply`'s changes to a receiver on this machine, verified; a receiver
 * gone, so the next delivery fails and waits for its retry; `PUT
 * /local/clock` four days on, so the retry falls due at once and the
 * webhook, three days without a 2xx, is disabled (PRODUCT P18: "a webhook
 * failing for 3 days is seen disabled without waiting 3 days"); the clock
 * back, the receiver back, `resume`, and the delivery that was in flight
 * arrives with its content as it is now. The page's placeholders are filled
 * from the banner (the key-admin port, the store's URL) and the test's free
 * ports; nothing else of a command is changed. It waits on the server's own
 * lines (the failed attempt, the disable) and on the receiver, never on a
 * timer.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { freePorts, killGroup, runNpm, runTs, waitForOutput, type Running } from '../support/process.js';
import { shownCommands, type ShownCommand } from '../support/shown-commands.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const shown = shownCommands().filter((c) => c.page === 'docs/webhooks.md');
const find = (pattern: RegExp): ShownCommand[] => shown.filter((c) => pattern.test(c.command));

let server: Running;
let port: number;
let receiverPort: number;
let keyAdminUrl: string;
let storeUrl: string;
const receivers: Receiver[] = [];
beforeAll(async () => {
  [port, receiverPort] = (await freePorts(2)) as [number, number];
  const [start] = find(/^npm start /);
  expect(start?.command).toBe('npm start -- --allow-loopback-webhooks');
  // As shown, on a free port of its own (the page's is 3000).
  server = runNpm(['start', '--', '--allow-loopback-webhooks', '--port', String(port)]);
  [, storeUrl] = (await waitForOutput(server, /Store: +(\S+)/)) as [string, string];
  [, keyAdminUrl] = (await waitForOutput(server, /Key admin: +(\S+)/)) as [string, string];
  await waitForOutput(server, /Stop: /);
}, 60_000);
afterAll(async () => {
  if (server) killGroup(server.child.pid!);
  await Promise.all(receivers.map((r) => r.close()));
});

/** A command of the page with its placeholders filled. */
function filled(command: string, webhookId = ''): string[] {
  const text = command
    .replace('http://127.0.0.1:PORT/admin/v1', keyAdminUrl)
    .replace('STORE_URL', storeUrl)
    .replace('http://127.0.0.1:3000', `http://127.0.0.1:${port}`)
    .replace('http://127.0.0.1:8080/', `http://127.0.0.1:${receiverPort}/`)
    .replace('WEBHOOK_ID', webhookId);
  return [...text.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
}
/** An `npm run keys -- …` or `npm run data:apply -- …` line of the page, run as that script runs it. */
async function npmRun(command: string, webhookId?: string) {
  const words = filled(command, webhookId);
  const script = { keys: 'local/cli/keys.ts', 'data:apply': 'local/cli/data-apply.ts' }[words[2]!];
  expect({ command, runs: words.slice(0, 2).join(' ') === 'npm run' && words[3] === '--' && script !== undefined }).toEqual({ command, runs: true });
  const result = await runTs(script!, words.slice(4)).done;
  expect({ command, code: result.code, stderr: result.stderr }).toEqual({ command, code: 0, stderr: '' });
  return result.stdout;
}
const curl = (command: string) => promisify(execFile)('curl', ['-s', '-f', ...filled(command).slice(1)]);

it("a delivery of a change, a failing receiver disabled after three days of the server's clock, and a resume, as the page runs them", async () => {
  const creates = find(/^npm run keys -- webhooks create /);
  // The operators' example and the walk's first step are one command.
  expect(new Set(creates.map((c) => c.command)).size).toBe(1);
  const made = await npmRun(creates[0]!.command);
  const [, webhookId, secret] = /^Created (wh_\w{20}) .*\nSecret \(shown once, store it now\):\n(whsec_\S+)\n$/s.exec(made) ?? [];
  expect(webhookId).toBeDefined();
  const get = find(/^npm run keys -- webhooks get /)[0]!.command;

  // The operators' list: its row.
  const [list] = find(/^npm run keys -- webhooks list /);
  expect(await npmRun(list!.command)).toMatch(new RegExp(`\\n${webhookId}\\s+active\\s+host usr_alice\\s+http://127\\.0\\.0\\.1:${receiverPort}/hooks\\n$`));

  // The receiver, with the secret the create printed; then the source's changes.
  const receiver = await startReceiver({ port: receiverPort, secrets: [secret!] });
  receivers.push(receiver);
  const [apply, applyAgain] = find(/^npm run data:apply -- /).map((c) => c.command);
  expect(apply).toBe('npm run data:apply -- docs/examples/alice-changes.jsonl --endpoint STORE_URL');
  await npmRun(apply!);
  // In one delivery or two, as each change reached the feed.
  const received = () => receiver.deliveries.flatMap((d) => d.body.changes.map((c) => `${c.change} ${c.id}`));
  while (received().length < 2) await receiver.arrived(receiver.deliveries.length + 1);
  expect(received()).toEqual(['upserted evt_tie07a', 'removed evt_tie07b']);
  expect(receiver.deliveries.every((d) => d.verified)).toBe(true);

  // The receiver gone: the next delivery fails, and waits for its retry.
  await receiver.close();
  receivers.pop();
  await npmRun(applyAgain!);
  await waitForOutput(server, new RegExp(`Webhook delivery failed; retried later .*webhookId=${webhookId} .*errorClass=connect`), 'stderr');
  const retrying = await npmRun(get, webhookId);
  expect(retrying).toMatch(/\n  state: +retrying at \d{4}-/);
  expect(retrying).toMatch(/\n  last failure: +connect at \d{4}-/);

  // Four days on: the retry falls due at once, fails, and the webhook is disabled.
  const [ahead, back] = find(/^curl -X PUT /).map((c) => c.command);
  expect(JSON.parse((await curl(ahead!)).stdout)).toMatchObject({ data: { offset_days: 4 } });
  await waitForOutput(server, new RegExp(`Webhook disabled .*webhookId=${webhookId} reason=failing`), 'stderr');
  expect(await npmRun(get, webhookId)).toMatch(/\n  state: +disabled \(failing\) since \d{4}-/);

  // The clock back, the receiver back, resume: the delivery that was in flight arrives, as the source has it now.
  expect(JSON.parse((await curl(back!)).stdout)).toMatchObject({ data: { offset_days: 0 } });
  const again = await startReceiver({ port: receiverPort, secrets: [secret!] });
  receivers.push(again);
  const [resume] = find(/^npm run keys -- webhooks resume /);
  expect(await npmRun(resume!.command, webhookId)).toBe(`Resumed ${webhookId} from where it stopped (active).\n`);
  await again.arrived(1);
  expect(again.deliveries[0]).toMatchObject({ verified: true, body: { changes: [{ id: 'evt_tie07a', change: 'upserted', event: { title: 'Double Bill (A): moved to 19:00' } }] } });
  expect(await npmRun(get, webhookId)).toMatch(/\n  state: +active\n/);
}, 120_000);
