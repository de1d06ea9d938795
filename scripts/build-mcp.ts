/**
 * `npm run build:mcp`: bundles the MCP adapter into dist/public-events-mcp.mjs,
 * the package's `public-events-mcp` bin. Everything it imports is inside (the
 * MCP SDK, zod, the client's transport), so the one file runs wherever Node
 * 20 or later does, copied anywhere, with no node_modules beside it.
 */
import { chmodSync } from 'node:fs';
import { build } from 'esbuild';

export const MCP_BIN = new URL('../dist/public-events-mcp.mjs', import.meta.url).pathname;

export async function buildMcp(): Promise<string> {
  await build({
    entryPoints: [new URL('../mcp/main.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: MCP_BIN,
    banner: { js: '#!/usr/bin/env node' },
    logLevel: 'error',
  });
  chmodSync(MCP_BIN, 0o755);
  return MCP_BIN;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`built ${await buildMcp()}\n`);
}
