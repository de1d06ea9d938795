/**
 * `npm run mcp` / the `public-events-mcp` bin: the MCP server on stdio.
 * stdout carries the protocol only; every log line goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError, configFromEnv } from './config.js';
import { PublicApiClient } from './public-api.js';
import { createMcpServer } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = configFromEnv(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`public-events-mcp: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const server = createMcpServer(new PublicApiClient(config), config.tools);
  await server.connect(new StdioServerTransport());
  process.stderr.write(
    `public-events-mcp: ready on stdio for ${config.baseUrl} with ${config.tools.join(', ')} (timeout ${config.timeoutMs} ms, ${config.retryAttempts} retries from ${config.retryDelayMs} ms)\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`public-events-mcp: ${(error as Error).message}\n`);
  process.exit(1);
});
