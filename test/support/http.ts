/**
 * Minimal HTTP client for the end-to-end tests: real requests over loopback.
 * Every response is checked against the OpenAPI document of its surface
 * (test/support/contract.ts) before the test sees it. Redirects are not
 * followed, so a test sees the 308 of the old prefix itself.
 */
import { assertMatchesDocument } from './contract.js';

export interface Reply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function get<T = Record<string, unknown>>(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply<T>> {
  const res = await fetch(url, { method, headers, redirect: 'manual' });
  const text = await res.text();
  let body: unknown = undefined;
  // Bodies of other media types (say text/calendar) stay text; the document check covers them.
  const json = !res.headers.get('content-type') || res.headers.get('content-type')!.startsWith('application/json');
  if (text && json) {
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${url} answered ${res.status} with a non-JSON body: ${text.slice(0, 200)}`);
    }
  }
  await assertMatchesDocument({ method, url, status: res.status, headers: res.headers, text });
  return { status: res.status, headers: res.headers, body: body as T, text };
}
