/**
 * `npm run rehearse`: synthesizes the staging and production stacks with real
 * bundling and rehearses each (local/rehearsal/): every documented route of
 * both APIs through the template's gateway (and its custom domain, if any),
 * with the demo key, must answer 200; a batch of change records goes through the ingest queue and must apply
 * with no failure; the key-management API refuses an unsigned request and its
 * create, retry and revoke work on the Public API at once, and the roles that
 * may delete API Gateway keys are refused every action on a foreign key,
 * stage or usage plan (key-admin-check.ts); and no AWS call of any function
 * may fall outside its role.
 * Offline: no AWS account, no Docker. Exits 1 with every problem named.
 *
 * `--serve [--stage NAME]` runs no checks: it keeps one stage's rehearsal up
 * for requests of your own and prints where (local/rehearsal/serve.ts) until
 * SIGINT or SIGTERM. package.json's `rehearse` execs this process in place of
 * npm's shell, as `start` does, so a signal sent to npm reaches it.
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { REHEARSAL_STAGES, rehearsalRequests } from '../rehearsal/checks.js';
import { foreignKeysRefused, keyAdminRoundTrip } from '../rehearsal/key-admin-check.js';
import { webhookRoundTrip } from '../rehearsal/webhook-check.js';
import { startRehearsal } from '../rehearsal/rehearsal.js';
import { serveBanner } from '../rehearsal/serve.js';
import { fail } from './fail.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const STAGES = Object.keys(REHEARSAL_STAGES);

const USAGE = `Usage: npm run rehearse [-- --serve [--stage ${STAGES.join('|')}]]

  (no option)    Rehearse the deployment offline: synthesize and bundle
                 the ${STAGES.join(' and ')} stacks, serve each template as API
                 Gateway and Lambda would run it, and check every route, the
                 key-management API, the ingest queue and every AWS call
                 against its role. Exits 1 with every problem named.
  --serve        Run no checks: keep one stage's rehearsal up and print its
                 URLs and demo key, until Ctrl-C (SIGINT) or SIGTERM.
  --stage NAME   The stage --serve rehearses: ${STAGES.join(' or ')} (default ${STAGES[0]}).
  -h, --help     Print this and run nothing.
`;

function options() {
  try {
    const { values } = parseArgs({ options: { serve: { type: 'boolean' }, stage: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
    if (values.stage !== undefined && !values.serve) throw new Error('--stage goes with --serve');
    if (values.stage !== undefined && !STAGES.includes(values.stage)) throw new Error(`--stage must be one of ${STAGES.join(', ')}`);
    return { help: values.help === true, serve: values.serve === true, stage: values.stage ?? STAGES[0]! };
  } catch (error) {
    return fail(`npm run rehearse: ${(error as Error).message}\n\n${USAGE}`, 2);
  }
}

async function serve(stage: string): Promise<void> {
  const rehearsal = await startRehearsal({ context: REHEARSAL_STAGES[stage]!, dataFile: `${ROOT}data/demo.json` });
  // Before the banner: whoever reads it may signal at once. Ctrl-C reaches this process twice (from the
  // terminal and forwarded by npm): the second must not cut the close short.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const problems = rehearsal.problems();
    rehearsal.close().then(
      () => {
        for (const p of problems) process.stdout.write(`PROBLEM ${p}\n`);
        process.stdout.write(`Stopped: ${problems.length} problem(s).\n`);
        process.exit(problems.length ? 1 : 0);
      },
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.write(serveBanner(stage, rehearsal));
}

async function check(): Promise<void> {
  let failed = false;
  for (const [name, context] of Object.entries(REHEARSAL_STAGES)) {
    const started = performance.now();
    // Webhooks' receivers are on this machine: the local setting that allows them, on the functions it runs (never in the template).
    const rehearsal = await startRehearsal({ context, dataFile: `${ROOT}data/demo.json`, allowLoopbackWebhooks: true });
    try {
      const lines: string[] = [];
      // Each API at its own (execute-api) URL, then through each custom domain of the template.
      const bases = [{ name: '', url: (path: string) => rehearsal.urlFor(path) }, ...rehearsal.domains.map((d) => ({ name: ` via ${d.name}`, url: (path: string) => `${d.url}${path}` }))];
      for (const base of bases) {
        for (const { route, path, headers } of rehearsalRequests(rehearsal.demoKey.key, rehearsal.cursorKey)) {
          const res = await fetch(base.url(path), { headers, redirect: 'manual' });
          await res.arrayBuffer();
          lines.push(`${res.status === 200 ? 'ok  ' : 'FAIL'} ${res.status} ${route} GET ${path}${base.name}`);
          if (res.status !== 200) failed = true;
        }
      }
      // Before the change batch, which edits the demo event the round trip reads.
      for (const check of [...(await keyAdminRoundTrip(rehearsal)), ...(await foreignKeysRefused(rehearsal))]) {
        lines.push(`${check.ok ? 'ok  ' : 'FAIL'} ${check.line}`);
        if (!check.ok) failed = true;
      }
      const queueId = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
      for (const line of readFileSync(`${ROOT}test/fixtures/changes-example.jsonl`, 'utf8').split('\n').filter(Boolean)) rehearsal.send(queueId, line);
      const ingest = await rehearsal.drain();
      lines.push(`${ingest.failures === 0 ? 'ok  ' : 'FAIL'} ingest: ${ingest.batches} batch(es), ${ingest.failures} failed record(s), ${ingest.deadLettered} dead-lettered`);
      if (ingest.failures) failed = true;
      for (const check of await webhookRoundTrip(rehearsal, `${ROOT}data/demo.json`)) {
        lines.push(`${check.ok ? 'ok  ' : 'FAIL'} ${check.line}`);
        if (!check.ok) failed = true;
      }
      const problems = rehearsal.problems();
      if (problems.length) failed = true;
      const allowed = rehearsal.endpoint.calls.filter((c) => c.allowed).length;
      console.log(`${name} (${rehearsal.assembly.stackName}, ${rehearsal.assembly.synthesized ? 'synthesized' : 'kept assembly'} ${rehearsal.assembly.dir}):`);
      for (const l of lines) console.log(`  ${l}`);
      console.log(`  ${allowed} AWS call(s) allowed by their roles, ${rehearsal.endpoint.denials.length} denied; ${((performance.now() - started) / 1000).toFixed(1)} s`);
      for (const p of problems) console.log(`  PROBLEM ${p}`);
    } finally {
      await rehearsal.close();
    }
  }
  process.exitCode = failed ? 1 : 0;
}

const o = options();
if (o.help) process.stdout.write(USAGE);
else if (o.serve) await serve(o.stage);
else await check();
