/**
 * A fault-injecting upstream on 127.0.0.1 for the retry tests of the client
 * and the MCP adapter: each request is recorded, then answered by the next
 * fault the test queued (a status with headers and body, a connection reset,
 * or a "hang" that aborts the caller's injected timeout signal once the
 * request is in, exactly as the timeout would, so no test waits real time).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = { status: number; body?: unknown; headers?: Record<string, string> } | 'reset' | 'hang';

export interface FaultServerHooks {
  /** The answer to the request just received. */
  next(): Fault;
  record(req: IncomingMessage): void;
  /** The timeout signal of the request in flight, aborted on a hang. */
  timeout(): AbortController | undefined;
}

export async function startFaultServer(hooks: FaultServerHooks): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    hooks.record(req);
    const fault = hooks.next();
    if (fault === 'reset') return void req.socket.destroy();
    if (fault === 'hang') return void hooks.timeout()?.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
    res.end(fault.body === undefined ? '' : JSON.stringify(fault.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/public/v1`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
