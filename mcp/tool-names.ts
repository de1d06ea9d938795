/** Every tool the adapter has, in the order it lists them (mcp/tools.ts defines them; PUBLIC_EVENTS_MCP_TOOLS picks among them). */
export const TOOL_NAMES = ['list-events', 'get-event', 'search-events'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
