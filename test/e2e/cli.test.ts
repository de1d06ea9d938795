/**
 * `npm start` and `npm run data:load` as other tools run them: real processes,
 * real ports, real exit codes.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { CONTRACT_EXAMPLE, DEMO_FILE, KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { MESSAGES } from '../../lambdas/core/errors.js';
import { errorBody } from '../../lambdas/http/envelope.js';
import { send } from '../support/hostile.js';
import { blockAfter } from '../support/shown-commands.js';
import { freePorts, killGroup, newcomerEnv, portIsFree, processGroupGone, runNpm, runTs, waitForOutput, within } from '../support/process.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { demoWeeks, describeMove } from '../../local/demo-dates.js';

const dir = mkdtempSync(join(tmpdir(), 'pe-cli-'));
const badFile = join(dir, 'bad.json');
const bad = JSON.parse(readFileSync(CONTRACT_EXAMPLE, 'utf8'));
bad.events[1].start_date = 'soon';
bad.rsvps[0].user_id = 'usr_ghost';
writeFileSync(badFile, JSON.stringify(bad));

describe('npm start', () => {
  // The command the README gives, npm and its shell included: a signal to the process it runs must stop all it started.
  it.each(['SIGTERM', 'SIGINT'] as const)('as typed, with fixed ports and a lowered quota: %s to npm stops everything it started', async (signal) => {
    const [port, storePort] = (await freePorts(2)) as [number, number];
    const run = runNpm(['start', '--', '--port', String(port), '--store-port', String(storePort), '--daily-quota', '1']);
    const group = run.child.pid!;
    let stopped;
    try {
      const [, publicUrl] = await waitForOutput(run, /Public API: (\S+)\n/);
      const [, store] = await waitForOutput(run, /Store: +(\S+)/);
      await waitForOutput(run, /Stop: /);
      expect(publicUrl).toBe(`http://127.0.0.1:${port}/api/public/v1`);
      expect(store).toBe(`http://127.0.0.1:${storePort}`);
      // The one request the day allows, then the quota's 429; both say the lowered limit.
      const first = await get(`${publicUrl}/events/evt_jazz01`, { 'x-events-api-key': KEYS.both });
      expect([first.status, first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual([200, '1', '0']);
      const second = await get(`${publicUrl}/events/evt_jazz01`, { 'x-events-api-key': KEYS.both });
      expect([second.status, second.headers.get('x-ratelimit-limit'), second.body]).toEqual([429, '1', errorBody(MESSAGES.tooManyRequests)]);

      process.kill(group, signal);
      // A shell between npm and the server may swallow the signal and leave npm waiting: bounded, so that fails rather than hangs.
      const exited = await within(run.exited, 10_000);
      // npm waits for the server, which holds both ports itself (the store runs in-process).
      const portsFree = [await portIsFree(port), await portIsFree(storePort)];
      stopped = { exited, portsFree, gone: await processGroupGone(group) };
    } finally {
      killGroup(group); // leaves no stray server behind a failure
    }
    expect(stopped).toEqual({ exited: { code: 0, signal: null }, portsFree: [true, true], gone: true });
    expect((await run.done).stderr).toBe('');
  }, 60_000);

  it('serves the demo, printing both base URLs and a working demo key, and stops on SIGTERM', async () => {
    const run = runTs('local/cli/start.ts', ['--port', '0']);
    const [, publicUrl] = await waitForOutput(run, /Public API: (http:\/\/127\.0\.0\.1:\d+\/api\/public\/v1)\n/);
    const [, embedUrl] = await waitForOutput(run, /Embed API: +(\S+)\n/);
    const [, key] = await waitForOutput(run, /Demo key: +(\S+)/);
    expect(embedUrl).toBe(publicUrl!.replace('/api/public/v1', '/api/embed/v1'));
    const bannerEnd = run.output().length;
    const reply = await get(`${publicUrl}/users/alice/events`, { 'x-events-api-key': key! });
    expect(reply.status).toBe(200);
    await waitForOutput(run, /GET \/api\/public\/v1\/users\/alice\/events 200/);
    // Keys in both carriers, good, revoked and unknown, on success and failure paths.
    await get(`${publicUrl}/events/evt_nope/guests?limit=0`, { authorization: `Bearer ${key}` });
    await get(`${publicUrl}/events/evt_jazz01`, { authorization: `Bearer ${KEYS.revoked}` });
    await get(`${publicUrl}/events/evt_jazz01`, { 'x-events-api-key': 'pk_unknown_0123456789abcdefghijklmnopqr' });
    await waitForOutput(run, /GET \/api\/public\/v1\/events\/evt_jazz01 401[\s\S]*GET \/api\/public\/v1\/events\/evt_jazz01 401/);
    run.child.kill('SIGTERM');
    const finished = await run.done;
    expect(finished.code).toBe(0);
    // The banner prints the demo key on purpose; nothing after it may contain any key.
    const afterBanner = finished.stdout.slice(bannerEnd) + finished.stderr;
    for (const secret of [key!, KEYS.revoked, 'pk_unknown_0123456789abcdefghijklmnopqr']) expect(afterBanner).not.toContain(secret);
  });

  it('--clock-offset-days runs the clock ahead, and PUT /local/clock moves it while the server runs: a changes-feed cursor from today has expired 31 days on', async () => {
    const run = runTs('local/cli/start.ts', ['--port', '0', '--clock-offset-days', '31']);
    // A failed expectation must not leave the server running (jest would wait for it).
    const stop = setTimeout(() => run.child.kill('SIGTERM'), 50_000);
    try {
      const [, publicUrl] = await waitForOutput(run, /Public API: (http:\/\/127\.0\.0\.1:\d+\/api\/public\/v1)\n/);
      const root = publicUrl!.replace(/\/api\/public\/v1$/, '');
      const move = async (body: string) => {
        const r = await fetch(`${root}/local/clock`, { method: 'PUT', body });
        return { status: r.status, body: (await r.json()) as { data?: { offset_days: number; now: string }; errors?: { field: string }[] } };
      };
      const started = (await (await fetch(`${root}/local/clock`)).json()) as { data: { offset_days: number; now: string } };
      expect(started.data.offset_days).toBe(31);
      expect(Date.parse(started.data.now) - Date.now()).toBeGreaterThan(30 * 86_400_000);
      // The clock moves while the server runs (PUT /local/clock): a cursor the server gives today works today and has expired 31 days on.
      expect((await move('{"offset_days": 0}')).body.data?.offset_days).toBe(0);
      const first = await get<{ data: { next_cursor: string } }>(`${publicUrl}/changes/events`, { 'x-events-api-key': KEYS.both });
      const cursor = first.body.data.next_cursor;
      const feed = async () => get<{ message: string }>(`${publicUrl}/changes/events?cursor=${encodeURIComponent(cursor)}`, { 'x-events-api-key': KEYS.both });
      expect((await feed()).status).toBe(200);
      const ahead = await move('{"offset_days": 31}');
      expect(Date.parse(ahead.body.data!.now) - Date.now()).toBeGreaterThan(30 * 86_400_000);
      const expired = await feed();
      expect([expired.status, expired.body.message]).toEqual([410, 'Cursor expired: start again without a cursor.']);
      for (const bad of ['{"offset_days": 1.5}', '{"offset_days": "31"}', '{"days": 31}', 'not json']) {
        const refused = await move(bad);
        expect({ bad, status: refused.status, fields: refused.body.errors?.map((e) => e.field) }).toEqual({ bad, status: 400, fields: ['offset_days'] });
      }
      expect((await (await fetch(`${root}/local/clock`)).json()) as { data: { offset_days: number } }).toMatchObject({ data: { offset_days: 31 } });
    } finally {
      clearTimeout(stop);
      run.child.kill('SIGTERM');
    }
    expect((await run.done).code).toBe(0);
  });

  it('prints its banner and nothing else on a first run: no AWS SDK Node-version notice, no warning', async () => {
    // runTs starts it in the environment a newcomer's shell has: without the SDK switch jest sets for itself.
    expect(newcomerEnv().AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBeUndefined();
    const before = demoWeeks(new Date());
    const run = runTs('local/cli/start.ts', ['--port', '0']);
    const [banner, port, storePort, adminPort] = await waitForOutput(run, /^Public Events API[\s\S]*?127\.0\.0\.1:(\d+)[\s\S]*?Store: +http:\/\/127\.0\.0\.1:(\d+)[\s\S]*?Key admin: +http:\/\/127\.0\.0\.1:(\d+)[\s\S]*?\nStop: .*\n/);
    const after = demoWeeks(new Date());
    run.child.kill('SIGTERM');
    const { code, stderr } = await run.done;
    expect(code).toBe(0);
    // The banner the local-server page shows, on its ports (3000, and 41234 and 41235 for the store's and the key admin's free ones).
    const shown = blockAfter('docs/local-server.md', 'the widget on one port:');
    // The demo's dates follow the wall clock here (npm start as a reader runs it): the weeks moved are this week's
    // (the week's start may pass during the start-up), and the page shows the line of the week it was written in.
    const dates = /^ {2}Dates: {6}(.*) \(--fixed-dates keeps them as written\)$/m;
    expect([describeMove(before), describeMove(after)]).toContain(dates.exec(banner!)?.[1]);
    expect(dates.test(shown)).toBe(true);
    expect(banner!.replace(dates, (dates.exec(shown) as RegExpExecArray)[0])).toBe(
      shown
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)
        .replaceAll('127.0.0.1:41234', `127.0.0.1:${storePort}`)
        .replaceAll('127.0.0.1:41235', `127.0.0.1:${adminPort}`),
    );
    expect(stderr).not.toMatch(/NodeVersionSupportWarning|Warning/);
    expect(stderr).toBe('');
  });

  it('answers a request that arrives while it is still starting (the handler exists before the port opens)', async () => {
    const [port] = (await freePorts(1)) as [number];
    // Node's own net debug log says when the server opens its port: connect right then, long before the banner.
    const run = runTs('local/cli/start.ts', ['--port', String(port)], { NODE_DEBUG: 'net' });
    try {
      await new Promise<void>((resolve) => {
        const opening = new RegExp(`setupListenHandle 127\\.0\\.0\\.1 ${port} `);
        let seen = '';
        const check = (d: Buffer) => {
          seen += d.toString();
          if (!opening.test(seen)) return;
          run.child.stderr!.off('data', check);
          resolve();
        };
        run.child.stderr!.on('data', check);
      });
      // listen() follows the log line in the same tick of the child; a refusal only means the child has not run it yet.
      const request = async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await send(port, { method: 'GET', target: '/api/embed/v1/events/evt_jazz01', headers: [] });
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ECONNREFUSED' || attempt >= 1000) throw error;
            await new Promise(setImmediate);
          }
        }
      };
      const answer = request();
      const bannerWhenConnected = run.output().includes('Public API');
      expect((await answer).status).toBe(200);
      expect(bannerWhenConnected).toBe(false); // the request really came in during start-up
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });

  it('takes its settings from the environment when no flag is given', async () => {
    const [storePort] = (await freePorts(1)) as [number];
    const env = { PORT: '0', STORE_PORT: String(storePort), DAILY_QUOTA: '7', DATA_FILE: CONTRACT_EXAMPLE, USER_EVENTS_VARIANT: 'dated', SERVICE_NAME: 'gatherly' };
    const run = runTs('local/cli/start.ts', [], env);
    const [, publicUrl] = await waitForOutput(run, /Public API: (\S+)\n/);
    const [, key] = await waitForOutput(run, /Demo key: +(\S+)/);
    expect((await waitForOutput(run, /Store: +(\S+)/))[1]).toBe(`http://127.0.0.1:${storePort}`);
    const reply = await get<{ data: unknown }>(`${publicUrl}/users/alice/events`, { 'x-gatherly-api-key': key! });
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.body.data)).toBe(true); // Variant A answers an array
    expect([reply.headers.get('x-ratelimit-limit'), reply.headers.get('x-ratelimit-remaining')]).toEqual(['7', '6']);
    run.child.kill('SIGTERM');
    await run.done;
  });

  it('exits non-zero with the loader messages for an invalid dataset', async () => {
    const { code, stderr } = await runTs('local/cli/start.ts', ['--port', '0', '--data', badFile]).done;
    expect(code).toBe(1);
    expect(stderr).toContain('events[1].start_date: invalid date-time');
    expect(stderr).toContain('rsvps[0].user_id: unknown user "usr_ghost"');
  });

  it('exits 2 naming a bad option', async () => {
    const { code, stderr } = await runTs('local/cli/start.ts', ['--user-events-variant', 'fancy']).done;
    expect(code).toBe(2);
    expect(stderr).toMatch(/userEventsVariant/);
  });

  it('exits 2 for a bad port, store port or quota, naming the option', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--daily-quota', '0'], /must be at least 1\n.*at dailyQuota/],
      [['--daily-quota', '1001'], /must be at most 1000, the quota in AWS\n.*at dailyQuota/], // the most X-RateLimit-Limit may say
      [['--port', '4000', '--store-port', '4000'], /must differ from the port\n.*at storePort/],
      [['--store-port', 'x'], /must be a number\n.*at storePort/],
    ];
    const runs = await Promise.all(cases.map(([args]) => runTs('local/cli/start.ts', args).done));
    for (const [i, { code, stderr }] of runs.entries()) expect({ code, stderr }).toEqual({ code: 2, stderr: expect.stringMatching(cases[i]![1]) });
  });

  it('names the store port when that is the one in use', async () => {
    const [storePort] = (await freePorts(1)) as [number];
    const holder = runTs('local/cli/start.ts', ['--port', '0', '--store-port', String(storePort)]);
    try {
      await waitForOutput(holder, /Stop: /);
      const { code, stderr } = await runTs('local/cli/start.ts', ['--port', '0', '--store-port', String(storePort)]).done;
      expect({ code, stderr }).toEqual({ code: 1, stderr: `npm start: port ${storePort} is already in use (try --store-port)\n` });
    } finally {
      holder.child.kill('SIGTERM');
      await holder.done;
    }
  });
});

describe('npm run data:load', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await startTestStore(undefined, 'public-events-local');
  });
  afterAll(async () => store?.close());

  const count = async () => (await store.client.send(new ScanCommand({ TableName: store.tableName, Select: 'COUNT' }))).Count;

  it('writes nothing and names every bad record when the file is invalid', async () => {
    const { code, stderr } = await runTs('local/cli/data-load.ts', [badFile, '--endpoint', store.endpoint]).done;
    expect(code).toBe(1);
    expect(stderr).toContain('nothing was written');
    expect(stderr).toContain('events[1].start_date: invalid date-time');
    expect(await count()).toBe(0);
  });

  it('loads a valid file and prints the counts', async () => {
    const { code, stdout, stderr } = await runTs('local/cli/data-load.ts', [DEMO_FILE, '--endpoint', store.endpoint]).done;
    expect(code).toBe(0);
    expect(stderr).toBe(''); // no AWS SDK Node-version notice on Node 20, nothing else either
    expect(stdout).toMatch(/events: 40 \(36 public, 4 hidden\)/);
    expect(stdout).toMatch(/items written: (\d+)/);
    const written = Number(/items written: (\d+)/.exec(stdout)![1]);
    expect(await count()).toBe(written);
  });

  it('requires --table when no --endpoint is given', async () => {
    const { code, stderr } = await runTs('local/cli/data-load.ts', [DEMO_FILE]).done;
    expect(code).toBe(2);
    expect(stderr).toContain('--table is required');
  });
});
