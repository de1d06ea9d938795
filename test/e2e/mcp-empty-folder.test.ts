/**
 * docs/mcp.md's "Trying it from any folder", run as the page shows it: in an
 * empty folder outside the checkout (no node_modules anywhere above it)
 * holding only the built file, through a shell, with nothing but PATH, HOME
 * and the local server's base URL in the environment. The hand-made
 * JSON-RPC handshake prints what the page shows; the Inspector commands
 * fetch the Inspector by version through `npx -y` (from npm's cache when
 * `npm ci` has filled it, offline), the version the repository tests with.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildMcp } from '../../scripts/build-mcp.js';
import { ROOT } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { blockAfter, shownCommands } from '../support/shown-commands.js';

/** What the page's commands reach by default: `npm start`'s Public API. */
const PAGE_BASE_URL = 'http://127.0.0.1:3000/api/public/v1';
const page = () => readFileSync(`${ROOT}docs/mcp.md`, 'utf8');

let server: TestServer;
let folder: string;
beforeAll(async () => {
  server = await startTestServer();
  folder = mkdtempSync(join(tmpdir(), 'pe-mcp-folder-'));
  copyFileSync(await buildMcp(), join(folder, 'public-events-mcp.mjs'));
  expect(readdirSync(folder)).toEqual(['public-events-mcp.mjs']);
}, 60_000);
afterAll(async () => server?.close());

/** A page's command through sh, in the folder, the local server's URL in place of npm start's. */
function shell(command: string, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd: folder, env: { PATH: process.env.PATH, HOME: process.env.HOME, PUBLIC_API_BASE_URL: server.publicBaseUrl, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const onPage = (start: string) => shownCommands().filter((c) => c.page === 'docs/mcp.md' && c.command.startsWith(start));

describe('docs/mcp.md from an empty folder: the JSON-RPC handshake by hand', () => {
  it('prints what the page shows: each shown line the whole line, or its start up to …', async () => {
    const [shown] = onPage("printf '%s\\n' ");
    expect(shown).toBeDefined();
    const { code, stdout, stderr } = await shell(shown!.command);
    expect(code).toBe(0);
    const printed = [...stdout.trimEnd().split('\n'), ...stderr.trimEnd().replaceAll(server.publicBaseUrl, PAGE_BASE_URL).split('\n')];
    const expected = blockAfter('docs/mcp.md', 'It prints three lines on stdout').trimEnd().split('\n');
    expect(printed).toHaveLength(expected.length);
    expected.forEach((line, i) => {
      const got = printed[i]!;
      if (line.endsWith('…')) expect(got.startsWith(line.slice(0, -1)) ? line : got).toBe(line);
      else expect(got).toBe(line);
    });
    // The answers are the protocol's: initialize, then tools/list and tools/call (the notification has none).
    const answers = stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> });
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect((answers[1]!.result.tools as { name: string }[]).map((t) => t.name)).toEqual(expect.arrayContaining(['get-event', 'list-events']));
    expect(answers[2]!.result.structuredContent).toMatchObject({ data: { id: 'evt_jazz01', title: 'Rooftop Jazz' } });
  }, 30_000);
});

describe('docs/mcp.md from an empty folder: the MCP Inspector', () => {
  const devVersion = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['@modelcontextprotocol/inspector'];
  const shown = onPage('npx -y @modelcontextprotocol/inspector@');

  it('names the version the repository tests with, in every command and in the prose', () => {
    expect(shown.map((c) => c.command.split(' --method ')[1]?.split(' ')[0])).toEqual(['tools/list', 'tools/call']);
    const named = [...page().matchAll(/@modelcontextprotocol\/inspector@([\w.-]+)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(new Set(named)).toEqual(new Set([devVersion]));
  });

  it.each(shown.map((c) => [c.command, c.command] as const))('as the page shows it: %s', async (_, command) => {
    // The page's base URL is npm start's; the test server's comes in as the page says, with -e.
    const withBase = command.replace(' --cli ', ` --cli -e PUBLIC_API_BASE_URL=${server.publicBaseUrl} `);
    const { code, stdout, stderr } = await shell(withBase, { npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const answer = JSON.parse(stdout) as { tools?: Array<{ name: string }>; structuredContent?: { data: { id: string } } };
    if (command.includes('tools/list')) expect(answer.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['get-event', 'list-events']));
    else expect(answer.structuredContent?.data.id).toBe('evt_jazz01');
    // Nothing was installed beside the file: npx keeps the Inspector in npm's own cache.
    expect(readdirSync(folder)).toEqual(['public-events-mcp.mjs']);
  }, 120_000);
});
