/**
 * The MCP server: `list-events`, `get-event` and `search-events` over the
 * Public API, or the ones PUBLIC_EVENTS_MCP_TOOLS names. It holds no data;
 * every call is one (retried) GET.
 */
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { refusedArguments, toolFailed, unknownTool } from './refusals.js';
import type { Outcome, PublicApiClient } from './public-api.js';
import {
  ARGUMENTS_OBJECT,
  TOOL_NAMES,
  failure,
  getEventInput,
  getEventOutput,
  listEventsInput,
  listEventsOutput,
  normaliseSearch,
  normaliseUserEvents,
  pathSegment,
  searchEventsInput,
  searchEventsOutput,
  success,
  type ToolName,
  type ToolResult,
} from './tools.js';

export const SERVER_INFO = { name: 'public-events-mcp', version: '1.0.0' };

const unexpectedShape = (outcome: Extract<Outcome, { ok: true }>) =>
  failure({ ok: false, status: outcome.status, message: 'The API answered with an unexpected shape', details: null, attempts: outcome.attempts });

export function createMcpServer(api: PublicApiClient, tools: readonly ToolName[] = TOOL_NAMES, log: (line: string) => void = (line) => void process.stderr.write(`public-events-mcp: ${line}\n`)): McpServer {
  const server = new McpServer(SERVER_INFO);
  const offered = new Set(tools);
  const registered = new Map<string, RegisteredTool>();

  if (offered.has('list-events')) registered.set('list-events', server.registerTool(
    'list-events',
    {
      title: 'List a user’s public events',
      description:
        'Lists published, public events of a user from the Public Events API. Returns {message, data: Event[]}, plus pagination: {limit, offset, total} when the API pages (it may not). ' +
        'Each event has id, title, description, start_date and end_date (ISO 8601 UTC), timezone (IANA; use it to state local times), location, cost (USD, null = free), creator and links. ' +
        'Use type=upcoming for "what is on next", type=past for history, type=profile for hosted plus attended events.',
      inputSchema: z.object(listEventsInput, { error: ARGUMENTS_OBJECT }),
      outputSchema: listEventsOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ username, type, limit }) => {
      const outcome = await api.get(`/users/${pathSegment('username', username)}/events`, { type, limit });
      if (!outcome.ok) return failure(outcome);
      const result = normaliseUserEvents(outcome.body, limit);
      return result ? success(result) : unexpectedShape(outcome);
    },
  ));

  if (offered.has('get-event')) registered.set('get-event', server.registerTool(
    'get-event',
    {
      title: 'Get one public event',
      description:
        'Gets one published, public event by id from the Public Events API. Returns {message, data: Event} with title, description (may contain markdown), ' +
        'start_date/end_date (ISO 8601 UTC), timezone (IANA), location, cost (USD, null = free), creator, links and contribution handles. ' +
        'A private, draft or unknown event is an error with status 404.',
      inputSchema: z.object(getEventInput, { error: ARGUMENTS_OBJECT }),
      outputSchema: getEventOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ eventId }) => {
      const outcome = await api.get(`/events/${pathSegment('eventId', eventId)}`);
      return outcome.ok ? success({ message: outcome.body.message, data: outcome.body.data as Record<string, unknown> }) : failure(outcome);
    },
  ));

  if (offered.has('search-events')) registered.set('search-events', server.registerTool(
    'search-events',
    {
      title: 'Find public events in a place and date range',
      description:
        'Finds published, public events in a city, a country or both, by local start date (PRODUCT: "what is on in Lisbon this weekend?"). ' +
        'city matches whatever its case, accents and spacing, in any script; country is an ISO code ("PT"), an English name or alias ("Portugal", "UK") or its own name ("Deutschland"). ' +
        'from/to are YYYY-MM-DD dates compared with each event\'s start date in its own time zone (default: today to 30 days later; at most 92 days). ' +
        'Returns {message, data: Event[], pagination: {limit, has_more, next_cursor}}, earliest local start first. has_more means more events are in the window: call again with cursor = next_cursor (and the same city and country) for the next page, until has_more is false; every event of the window is reached that way, even on a day with more than 100. ' +
        'Each event has id, title, description, start_date and end_date (ISO 8601 UTC), timezone (IANA), local_start (the start in the event\'s own zone, with its offset: state local times from it), location, cost (USD, null = free), creator and links.',
      inputSchema: searchEventsInput,
      outputSchema: searchEventsOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ city, country, from, to, limit, cursor }) => {
      const outcome = await api.get('/events', { city, country, from, to, limit, cursor });
      if (!outcome.ok) return failure(outcome);
      const result = normaliseSearch(outcome.body);
      return result ? success(result) : unexpectedShape(outcome);
    },
  ));

  // Calls are parsed here, not by the SDK, so that a refusal is this project's envelope and words (mcp/refusals.ts):
  // the SDK answers an unknown tool or a bad argument with its own texts. Unknown arguments are dropped by the
  // object schemas (every route and tool ignores what it does not read). The answers' shapes are held by the
  // normalisers and their tests, so the SDK's check of structuredContent against outputSchema is not repeated.
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const tool = registered.get(name);
    if (!tool?.inputSchema) return unknownTool(name, [...registered.keys()]);
    const parsed = await (tool.inputSchema as z.ZodType).safeParseAsync(args ?? {});
    if (!parsed.success) return refusedArguments(parsed.error);
    try {
      // The SDK types a handler for task tools too; these are plain callbacks of (arguments, extra).
      return await (tool.handler as (a: unknown, e: typeof extra) => Promise<ToolResult>)(parsed.data, extra);
    } catch (cause) {
      return toolFailed(name, cause, log);
    }
  });

  return server;
}
