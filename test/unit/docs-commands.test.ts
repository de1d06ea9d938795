/**
 * Every command the README and docs/*.md show in a ```sh block is run by a
 * test, or, where it needs an AWS account, checked as far as it can be
 * offline. The `curl` requests are sent for real by test/e2e/docs-requests;
 * the rest are listed below with the test that runs each. A command shown on
 * a page that matches none of them fails here, so a new one comes with its
 * test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseChange } from '../../lambdas/core/changes.js';
import { stackConfigFromContext } from '../../lib/stack-config.js';
import { DOC_PAGES, blocksFromFiles, shownCommands, type ShownCommand } from '../support/shown-commands.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface Exercised {
  shown: RegExp;
  /** The test (or CI script) that runs it, and what in that file shows it does. */
  by: string;
  proof: (match: RegExpExecArray) => string;
}

const EXERCISED: Exercised[] = [
  { shown: /^npm ci && npm start$/, by: 'test/e2e/cli.test.ts', proof: () => "runNpm(['start', '--'" },
  // The suite itself, as CI runs it.
  { shown: /^npm test$/, by: '.ci/run', proof: () => 'npm test -- ' },
  // The browser project alone; `npm test` runs it too where Chromium is, and CI requires it there.
  { shown: /^npm run test:browser$/, by: 'test/unit/browser-project.test.ts', proof: () => "expect(scripts['test:browser']).toBe(`${scripts.jest} --selectProjects browser`)" },
  // `npm run rehearse` runs local/cli/rehearse.ts: the same rehearsal and the same requests (local/rehearsal/checks.ts) as this test, on both stages.
  { shown: /^npm run rehearse$/, by: 'test/rehearsal/stages.test.ts', proof: () => 'rehearsalRequests(rehearsal.demoKey.key, rehearsal.cursorKey, new Date(NOW))' },
  { shown: /^npm run rehearse -- --serve$/, by: 'test/rehearsal/serve.test.ts', proof: () => "runNpm(['run', 'rehearse', '--', '--serve'])" },
  { shown: /^npm test -- --selectProjects rehearsal$/, by: 'jest.config.js', proof: () => "displayName: 'rehearsal'" },
  // The jest half of `npm test` (the same command, held equal there), run on one file by that test.
  { shown: /^npm run jest -- test\/\S+\.test\.ts --selectProjects dynalite$/, by: 'test/e2e/second-store.test.ts', proof: () => "['run', 'jest', '--', FILE" },
  { shown: /^npm run data:load -- FILE \[--endpoint URL\]/, by: 'test/e2e/cli.test.ts', proof: () => "runTs('local/cli/data-load.ts', [DEMO_FILE, '--endpoint'" },
  { shown: /^npm run data:rederive -- \[--endpoint URL\] \[--table NAME\] \[--dry-run\]$/, by: 'test/integration/rederive-zone-rules.test.ts', proof: () => "runTs('local/cli/data-rederive.ts', ['--endpoint', store.endpoint, '--table', table, '--dry-run'])" },
  // The keeping-in-sync page's walk: the sync example and the committed change file, run as shown against the local server.
  { shown: /^PUBLIC_API_KEY=\$KEY PUBLIC_API_BASE_URL=\S+ npx tsx client\/examples\/keep-in-sync\.ts alice$/, by: 'test/e2e/client-example.test.ts', proof: () => "runTs('client/examples/keep-in-sync.ts'" },
  { shown: /^npm run data:apply -- docs\/examples\/alice-changes\.jsonl --endpoint STORE_URL$/, by: 'test/e2e/client-example.test.ts', proof: () => "runTs('local/cli/data-apply.ts', [changeFile, '--endpoint', server.storeEndpoint])" },
  { shown: /^npm run data:apply -- FILE --endpoint URL$/, by: 'test/e2e/data-apply.test.ts', proof: () => "runTs('local/cli/data-apply.ts', [EXAMPLE, '--endpoint', store])" },
  { shown: /^npm run keys -- (create|list|revoke) .*--endpoint http:\/\/127\.0\.0\.1:PORT$/, by: 'test/e2e/keys-and-quota.test.ts', proof: (m) => `keysCli('${m[1]}'` },
  // The web product's example against the local server, with the documented local pair (the test checks the page's pair is the server's).
  {
    shown: /^KEY_ADMIN_URL=http:\/\/127\.0\.0\.1:PORT\/admin\/v1 PUBLIC_API_URL=http:\/\/127\.0\.0\.1:3000\/api\/public\/v1 AWS_REGION=[a-z0-9-]+ AWS_ACCESS_KEY_ID=\S+ AWS_SECRET_ACCESS_KEY=\S+ npx tsx keys\/examples\/manage-keys\.ts usr_frank$/,
    by: 'test/e2e/key-admin-example.test.ts',
    proof: () => "runTs('keys/examples/manage-keys.ts', ['usr_frank'], { ...env(), PUBLIC_API_URL: `${server.url}/api/public/v1` })",
  },
  // docs/webhooks.md: the local setting, the operators' commands and the walk, run as shown against npm start -- --allow-loopback-webhooks.
  { shown: /^npm start -- --allow-loopback-webhooks$/, by: 'test/e2e/webhooks-walk.test.ts', proof: () => "runNpm(['start', '--', '--allow-loopback-webhooks'" },
  { shown: /^npm run keys -- webhooks (create|list|get|resume) .*--key-admin-url http:\/\/127\.0\.0\.1:PORT\/admin\/v1$/, by: 'test/e2e/webhooks-walk.test.ts', proof: (m) => `find(/^npm run keys -- webhooks ${m[1]} /)` },
  { shown: /^npm run data:apply -- docs\/examples\/alice-changes-2\.jsonl --endpoint STORE_URL$/, by: 'test/e2e/webhooks-walk.test.ts', proof: () => "find(/^npm run data:apply -- /)" },
  // The page's receiver, its block run as written with the packed client (the secret the create printed).
  { shown: /^WEBHOOK_SECRET=whsec_… PORT=8080 node receiver\.mjs$/, by: 'test/e2e/client-package.test.ts', proof: () => "blockAfter('docs/webhooks.md', \"A receiver that keeps a copy of a host's events\")" },
  // The web product's webhooks example against the local server, with the documented local pair (the test checks the page's pair).
  {
    shown: /^KEY_ADMIN_URL=http:\/\/127\.0\.0\.1:PORT\/admin\/v1 AWS_REGION=[a-z0-9-]+ AWS_ACCESS_KEY_ID=\S+ AWS_SECRET_ACCESS_KEY=\S+ npx tsx keys\/examples\/manage-webhooks\.ts usr_alice key_10fa5c81e93a15cfb525 http:\/\/127\.0\.0\.1:8080\/hooks$/,
    by: 'test/e2e/webhook-admin-example.test.ts',
    proof: () => "runTs('keys/examples/manage-webhooks.ts'",
  },
  { shown: /^npm run smoke -- --public-url PUBLIC_API_URL --embed-url EMBED_API_URL --key KEY \[--username USER --event-id EVENT_ID\]$/, by: 'test/e2e/smoke.test.ts', proof: () => "runTs('scripts/smoke.ts', args)" },
  // The deploy page's forms of the same command: without the optional arguments, and with the quota report.
  { shown: /^npm run smoke -- --public-url PUBLIC_API_URL --embed-url EMBED_API_URL --key KEY$/, by: 'test/e2e/smoke.test.ts', proof: () => "runTs('scripts/smoke.ts', args)" },
  { shown: /^npm run smoke -- .* \[--quota-key SPARE_KEY \[--quota-pace-ms 350\]\]$/, by: 'test/e2e/smoke.test.ts', proof: () => '--quota-key' },
  { shown: /^npm run smoke -- .* \[--quota-key SPARE_KEY \[--quota-pace-ms 350\]\] \[--widget-url WIDGET_URL --widget-integrity WIDGET_INTEGRITY\]$/, by: 'test/e2e/smoke.test.ts', proof: () => '--widget-integrity' },
  // `npm run -s mcp` as a client runs it (stdout checked to be JSON-RPC only); the bin from build:mcp under the MCP Inspector.
  { shown: /^npm run -s mcp$/, by: 'test/e2e/mcp.test.ts', proof: () => "['npm run -s mcp', ['run', '-s', 'mcp'], ROOT]" },
  { shown: /^npm run build:mcp$/, by: 'test/e2e/mcp.test.ts', proof: () => 'await buildMcp()' },
  // Run as shown through sh (npx -y, the JSON-RPC handshake through printf), in an empty folder holding only the built file.
  { shown: /^npx -y @modelcontextprotocol\/inspector@[\w.-]+ --cli /, by: 'test/e2e/mcp-empty-folder.test.ts', proof: () => "onPage('npx -y @modelcontextprotocol/inspector@')" },
  { shown: /^printf '%s\\n' .* \| PUBLIC_API_KEY=\S+ node public-events-mcp\.mjs$/, by: 'test/e2e/mcp-empty-folder.test.ts', proof: () => "onPage(\"printf '%s\\\\n' \")" },
  // The exact tables of docs/performance.md: that test runs the CLI with --exact and checks what --write puts in their sections.
  { shown: /^npm run bench -- --exact --write$/, by: 'test/integration/performance-tables.test.ts', proof: () => "runTs('scripts/bench.ts', ['--exact'])" },
  { shown: /^npm run idle-cost$/, by: 'test/infra/idle-cost.test.ts', proof: () => "page('performance.md').includes(report)" },
  { shown: /^npm run openapi$/, by: 'test/unit/openapi.test.ts', proof: () => 'keeps docs/openapi/ current (npm run openapi)' },
  { shown: /^npm run client:types$/, by: 'test/unit/client-types.test.ts', proof: () => 'staleClientTypes' },
  { shown: /^npm ci && cd client && npm pack$/, by: 'test/e2e/client-package.test.ts', proof: () => "run('npm', ['pack'" },
  { shown: /^cd \/your\/project && npm install \/path\/to\/public-events-client-1\.0\.0\.tgz$/, by: 'test/e2e/client-package.test.ts', proof: () => "run('npm', ['install'" },
  // The client page's new project, step by step as shown (offline: the repository's TypeScript, the packed tarball).
  {
    shown: /^(mkdir my-app && cd my-app|npm init -y && npm pkg set type=module|npm install --save-dev typescript && npx tsc --init|npm install \/path\/to\/public-events-client-1\.0\.0\.tgz|npx tsc && PUBLIC_API_KEY=\S+ PUBLIC_API_BASE_URL=\S+ node index\.js)$/,
    by: 'test/e2e/client-package.test.ts',
    proof: () => "blockAfter('docs/client.md', 'Compile it and run it')",
  },
];

/** Commands against a deployed stack: they need an AWS account, so each is checked offline as far as it can be. */
const NEEDS_AWS: Array<{ shown: RegExp; check: (command: string) => void }> = [
  // The cursor key's rotation, in two steps: a fresh random value (never a literal) staged as pending, then made current.
  {
    shown: /^aws secretsmanager (put-secret-value|update-secret-version-stage) /,
    check: (command) => {
      expect([
        'aws secretsmanager put-secret-value --secret-id CURSOR_KEY_SECRET_ARN --secret-string "$(openssl rand -base64 48)" --version-stages AWSPENDING',
        'aws secretsmanager update-secret-version-stage --secret-id CURSOR_KEY_SECRET_ARN --version-stage AWSCURRENT --move-to-version-id NEW_VERSION_ID --remove-from-version-id OLD_VERSION_ID',
      ]).toContain(command);
      expect(read('lib/cursor-key.ts')).toContain("new CfnOutput(scope, 'CursorKeySecretArn'");
      // The functions accept a pending key (lambdas/http/cursor-keys.ts).
      expect(read('lambdas/http/cursor-keys.ts')).toContain("const STAGES = ['AWSCURRENT', 'AWSPENDING', 'AWSPREVIOUS'] as const;");
    },
  },
  { shown: /^npx cdk bootstrap( aws:\/\/ACCOUNT\/(REGION|us-east-1))?$/, check: () => undefined },
  {
    // Every -c value is one the app's context parser accepts (placeholders filled), and a named stack is one the app defines.
    shown: /^npx cdk deploy /,
    check: (command) => {
      const context = Object.fromEntries(
        [...command.matchAll(/-c (\w+)=(\S+)/g)].map((m) => [m[1], (m[2] as string).replace(/ACCOUNT/g, '123456789012').replace(/REGION/g, 'us-east-1').replace(/…$/, 'name/0123')]),
      );
      const config = stackConfigFromContext((key) => context[key], String(context.stage));
      expect(config.stage).toBe(context.stage);
      const stack = /^npx cdk deploy (PublicEvents[\w-]*)/.exec(command)?.[1];
      if (stack) expect([`PublicEvents-${config.stage}`, `PublicEventsEmbedWaf-${config.stage}`]).toContain(stack);
    },
  },
  {
    // The message body is a change record the ingest accepts.
    shown: /^aws sqs send-message --queue-url "\$INGEST_QUEUE_URL" --message-body '(.*)'$/,
    check: (command) => {
      const body = /--message-body '(.*)'$/.exec(command)?.[1] as string;
      expect(parseChange(JSON.parse(body))).toMatchObject({ ok: true });
    },
  },
  // The ARN is a stack output.
  { shown: /^aws sqs start-message-move-task --source-arn "?\$?DLQ_ARN"?$/, check: () => expect(read('lib/ingest.ts')).toContain("'IngestDeadLetterQueueArn'") },
  // The Embed web ACL's ARN is that stack's output, and the service stack's parameter of the same name.
  {
    shown: /^EMBED_WEB_ACL_ARN=\$\(aws cloudformation describe-stacks --region us-east-1 --stack-name PublicEventsEmbedWaf-\w+ --query "Stacks\[0\]\.Outputs\[\?OutputKey=='(\w+)'\]\.OutputValue" --output text\)$/,
    check: (command) => {
      const output = /OutputKey=='(\w+)'/.exec(command)?.[1] as string;
      expect(read('lib/embed-waf-stack.ts')).toContain(`new CfnOutput(this, '${output}'`);
      expect(read('lib/public-events-stack.ts')).toContain(`EMBED_WEB_ACL_PARAMETER = '${output}'`);
    },
  },
  // The topic is a stack output.
  { shown: /^aws sns (subscribe|list-subscriptions-by-topic) --topic-arn ALARM_TOPIC_ARN/, check: () => expect(read('lib/public-events-stack.ts')).toContain("'AlarmTopicArn'") },
  // The CLIs pointed at a deployed table: their options for it exist.
  { shown: /^npm run data:load -- \S+ --table TABLE_NAME$/, check: () => expect(read('local/cli/data-load.ts')).toContain("table: { type: 'string' }") },
  { shown: /^npm run keys -- create .*--table TABLE_NAME --usage-plan-id USAGE_PLAN_ID$/, check: () => expect(read('local/cli/keys.ts')).toContain('--table NAME --usage-plan-id ID') },
  // The same CLI as the --endpoint form above, pointed at a deployed table; its argument handling is tested (--table required without --endpoint).
  { shown: /^npm run data:apply -- FILE --table TABLE_NAME$/, check: () => expect(read('test/e2e/data-apply.test.ts')).toContain("toContain('--table is required')") },
];

const commands = shownCommands().filter((c) => !c.command.startsWith('curl '));
const label = (c: ShownCommand) => `${c.page}: ${c.command}`;

describe('the commands the docs show', () => {
  it('include the two of the README', () => {
    expect(commands.filter((c) => c.page === 'README.md').map((c) => c.command)).toEqual(['npm ci && npm start', 'npm test']);
  });

  it.each(commands.map((c) => [label(c), c] as const))('%s', (_, shown) => {
    const exercised = EXERCISED.flatMap((e) => {
      const match = e.shown.exec(shown.command);
      return match ? [{ ...e, match }] : [];
    });
    const aws = NEEDS_AWS.filter((a) => a.shown.test(shown.command));
    expect({ command: shown.command, covered: exercised.length + aws.length > 0 }).toEqual({ command: shown.command, covered: true });
    for (const e of exercised) expect({ by: e.by, runs: read(e.by).includes(e.proof(e.match)) }).toEqual({ by: e.by, runs: true });
    for (const a of aws) a.check(shown.command);
  });

  it('every npm script a page names in code exists', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    for (const page of DOC_PAGES) {
      for (const [, name] of read(page).matchAll(/npm run (?:-s )?([\w:-]+)/g)) expect({ page, script: name, exists: scripts.includes(name as string) }).toEqual({ page, script: name, exists: true });
    }
  });
});

describe('the blocks the docs say come from a file', () => {
  const blocks = blocksFromFiles();

  it('are found (the change-record example among them)', () => {
    expect(blocks.map((b) => `${b.page} ← ${b.file}`)).toContain('docs/data-and-changes.md ← test/fixtures/changes-example.jsonl');
  });

  it.each(blocks.map((b) => [`${b.page} ← ${b.file}`, b] as const))('%s: every line is a line of the file, in the file\'s order', (_, block) => {
    const fileLines = read(block.file).split('\n');
    let from = 0;
    for (const line of block.body.trimEnd().split('\n')) {
      const at = fileLines.indexOf(line, from);
      expect({ line, inFile: at >= 0 }).toEqual({ line, inFile: true });
      from = at + 1;
    }
  });
});
