/**
 * A response "lost" on its way back, for the tests of lost responses: a
 * middleware at the SDK's deserialize step (inside its retry middleware, so the
 * SDK retries as it would a real socket timeout) lets the request land, then
 * throws this instead of returning the answer.
 *
 * A real timeout destroys the socket, and so does this: it discards the raw
 * response it drops. Left unread, that response kept its connection checked
 * out of the client's agent, and referenced, for as long as the server held
 * the connection open. DynamoDB Local holds it: the jest worker that ran such
 * a file could not exit and was force-exited at the end of every run
 * ("A worker process has failed to exit gracefully"). The client's destroy()
 * does not help: a DynamoDBDocumentClient's is a no-op, it leaves the
 * DynamoDBClient it wraps (and that client's sockets) alone.
 */
export function loseResponse(out: unknown): never {
  const body = (out as { response?: { body?: unknown } } | undefined)?.response?.body;
  if (body && typeof (body as { destroy?: unknown }).destroy === 'function') (body as { destroy(): void }).destroy();
  throw Object.assign(new Error('socket timed out after the request was sent'), { name: 'TimeoutError' });
}

/**
 * The connections to `endpoint` that this process holds open, referenced (so
 * that it cannot exit): each as "local port -> endpoint". A connection idle in
 * a client's keep-alive pool is unreferenced and not listed; one whose answer
 * was never read is. Node lists only referenced handles here.
 */
export function heldConnections(endpoint: string): string[] {
  const port = Number(new URL(endpoint).port);
  // Not in @types/node: the one way to see a process's handles with their ports (getActiveResourcesInfo gives type names only).
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles
    .filter((h): h is { remotePort?: number; localPort?: number; destroyed?: boolean } => h?.constructor?.name === 'Socket')
    .filter((s) => s.remotePort === port && s.destroyed !== true)
    .map((s) => `${s.localPort} -> ${endpoint}`);
}
