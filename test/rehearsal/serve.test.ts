/**
 * `npm run rehearse` as an operator types it, npm and its shell included:
 * `--help` prints the usage and runs nothing; `--serve` keeps staging's
 * rehearsal up (the assembly jest's globalSetup bundled), prints its URLs and
 * demo key, answers a request of one's own sent as the banner shows it, and
 * Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops
 * everything it started.
 */
import { describe, expect, it } from '@jest/globals';
import { killGroup, processGroupGone, runNpm, waitForOutput, within } from '../support/process.js';
import { blockAfter } from '../support/shown-commands.js';

/** A banner with what changes between runs (ports, where the assembly is) named instead. */
const general = (banner: string) =>
  banner
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
    .replace(/, (?:synthesized|kept assembly) \S+\)/, ', ASSEMBLY)')
    .trimEnd();

describe('npm run rehearse', () => {
  it.each(['--help', '-h'])('%s prints the usage and runs nothing', async (flag) => {
    const { code, stdout, stderr } = await runNpm(['run', '-s', 'rehearse', '--', flag]).done;
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Usage: npm run rehearse \[-- --serve \[--stage staging\|production\]\]\n/);
    for (const option of ['--serve', '--stage NAME', '-h, --help']) expect(stdout).toContain(`  ${option}`);
    // No stage was synthesized, served or checked.
    expect(stdout).not.toMatch(/^(staging|production) \(|^ {2}ok /m);
  }, 30_000);

  it.each([
    ['an unknown option', ['--bogus']],
    ['--stage without --serve', ['--stage', 'production']],
    ['a stage it does not rehearse', ['--serve', '--stage', 'dev']],
  ])('%s is refused with the usage, exit 2', async (_, args) => {
    const { code, stdout, stderr } = await runNpm(['run', '-s', 'rehearse', '--', ...args]).done;
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^npm run rehearse: .+\n\nUsage: npm run rehearse /);
  }, 30_000);

  it('--serve keeps the rehearsal up, answers the printed URL with the printed key, and stops on Ctrl-C', async () => {
    const run = runNpm(['run', 'rehearse', '--', '--serve']);
    const group = run.child.pid!;
    let stopped;
    try {
      const [, publicUrl] = await waitForOutput(run, /^ {2}Public API: +(http:\/\/127\.0\.0\.1:\d+\/api\/public\/v1)$/m);
      const [, embedUrl] = await waitForOutput(run, /^ {2}Embed API: +(http:\/\/127\.0\.0\.1:\d+\/api\/embed\/v1)$/m);
      const [, key] = await waitForOutput(run, /^ {2}Demo key: +(\S+)$/m);
      // The banner docs/deploy.md shows, ports and the assembly's place aside.
      await waitForOutput(run, /^Function logs go to stderr\..*\n/m);
      const banner = run.output().slice(run.output().indexOf('Rehearsal of staging'));
      expect(general(banner)).toBe(general(blockAfter('docs/deploy.md', 'it prints, ports being any free ones')));
      // The banner's own example, sent as shown.
      const [, header, shownUrl] = await waitForOutput(run, /^ {2}curl -H '([^']+)' (\S+)$/m);
      expect(shownUrl!.startsWith(`${publicUrl}/`)).toBe(true);
      const [name, value] = header!.split(': ') as [string, string];
      expect(value).toBe(`Bearer ${key}`);
      const shown = await fetch(shownUrl!, { headers: { [name]: value } });
      expect([shown.status, ((await shown.json()) as { data: { id: string } }).data.id]).toEqual([200, 'evt_jazz01']);
      // Any route of one's own, through the template's gateway: the key is checked (and a wrong one refused).
      const own = await fetch(`${publicUrl}/users/alice/events?type=upcoming&limit=2`, { headers: { 'x-events-api-key': key! } });
      expect([own.status, ((await own.json()) as { data: { events: unknown[] } }).data.events.length]).toEqual([200, 2]);
      const refused = await fetch(`${publicUrl}/events/evt_jazz01`, { headers: { 'x-events-api-key': `${key}x` } });
      await refused.arrayBuffer();
      expect(refused.status).toBe(401);
      const embed = await fetch(`${embedUrl}/events/evt_jazz01`);
      await embed.arrayBuffer();
      expect(embed.status).toBe(200);

      process.kill(-group, 'SIGINT');
      const exited = await within(run.exited, 20_000);
      stopped = { exited, gone: await processGroupGone(group), portFree: await fetch(`${publicUrl}/openapi.json`).then(() => false, () => true) };
    } finally {
      killGroup(group); // leaves no stray rehearsal behind a failure
    }
    expect(stopped).toEqual({ exited: { code: 0, signal: null }, gone: true, portFree: true });
    expect((await run.done).stdout).toMatch(/\nStopped: 0 problem\(s\)\.\n$/);
  }, 180_000);
});
