/**
 * What a tool answers when it refuses a call before any request: the same
 * `{ error: { status, message, details, attempts } }` as a refusal of the
 * API's (mcp/tools.ts failure), in this project's words. The SDK's own
 * validation would answer "MCP error -32602: Input validation error: …"
 * with zod's default texts ("Too small: expected number to be >=1"), which
 * neither an assistant nor its user should have to decode; so the server
 * parses arguments itself (mcp/server.ts) and every schema leaf names its
 * own failure (mcp/tools.ts).
 */
import type * as z from 'zod';
import type { ToolResult } from './tools.js';

export interface ArgumentError {
  field: string;
  message: string;
}

const result = (error: { status: number | null; message: string; details: ArgumentError[] | null; attempts: number }): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }],
  isError: true,
});

/** Every failing argument at once, the first one's text as the message (as the API's 400 does). */
export function refusedArguments(error: z.ZodError): ToolResult {
  const details = error.issues.map((issue) => ({ field: issue.path.map(String).join('.') || 'arguments', message: issue.message }));
  return result({ status: 400, message: details[0]?.message ?? 'The arguments are not an object', details, attempts: 0 });
}

export function unknownTool(name: string, offered: readonly string[]): ToolResult {
  return result({ status: 404, message: `This server has no tool named "${name}"; it offers ${offered.join(', ')}`, details: null, attempts: 0 });
}

/**
 * A tool that failed before the API answered (never expected: the client turns network failures into outcomes). No
 * HTTP status was answered, so none is made up (`null`, as an unreachable API's outcome has): the caller is told to
 * try again, and the cause goes to the server's log (stderr), not into an assistant's context.
 */
export function toolFailed(name: string, cause: unknown, log: (line: string) => void): ToolResult {
  log(`${name} failed before the Public API answered: ${cause instanceof Error ? cause.message : String(cause)}`);
  return result({ status: null, message: `${name} failed before the Public API answered (this server's log says why); try again`, details: null, attempts: 0 });
}
