/**
 * The MCP server: `list-events` and `get-event` over the Public API. It holds
 * no data; every call is one (retried) GET.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { PublicApiClient } from './public-api.js';
import { failure, getEventInput, getEventOutput, listEventsInput, listEventsOutput, normaliseUserEvents, pathSegment, success } from './tools.js';

export const SERVER_INFO = { name: 'public-events-mcp', version: '1.0.0' };

export function createMcpServer(api: PublicApiClient): McpServer {
  const server = new McpServer(SERVER_INFO);

  server.registerTool(
    'list-events',
    {
      title: 'List a user’s public events',
      description:
        'Lists published, public events of a user from the Public Events API. Returns {message, data: Event[]}, plus pagination: {limit, offset, total} when the API pages (it may not). ' +
        'Each event has id, title, description, start_date and end_date (ISO 8601 UTC), timezone (IANA; use it to state local times), location, cost (USD, null = free), creator and links. ' +
        'Use type=upcoming for "what is on next", type=past for history, type=profile for hosted plus attended events.',
      inputSchema: listEventsInput,
      outputSchema: listEventsOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ username, type, limit }) => {
      const outcome = await api.get(`/users/${pathSegment('username', username)}/events`, { type, limit });
      if (!outcome.ok) return failure(outcome);
      const result = normaliseUserEvents(outcome.body, limit);
      return result ? success(result) : failure({ ok: false, status: outcome.status, message: 'The API answered with an unexpected shape', details: null, attempts: outcome.attempts });
    },
  );

  server.registerTool(
    'get-event',
    {
      title: 'Get one public event',
      description:
        'Gets one published, public event by id from the Public Events API. Returns {message, data: Event} with title, description (may contain markdown), ' +
        'start_date/end_date (ISO 8601 UTC), timezone (IANA), location, cost (USD, null = free), creator, links and contribution handles. ' +
        'A private, draft or unknown event is an error with status 404.',
      inputSchema: getEventInput,
      outputSchema: getEventOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ eventId }) => {
      const outcome = await api.get(`/events/${pathSegment('eventId', eventId)}`);
      return outcome.ok ? success({ message: outcome.body.message, data: outcome.body.data as Record<string, unknown> }) : failure(outcome);
    },
  );

  return server;
}
