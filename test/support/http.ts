/** Minimal HTTP client for the end-to-end tests: real requests over loopback. */
export interface Reply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function get<T = Record<string, unknown>>(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply<T>> {
  const res = await fetch(url, { method, headers });
  const text = await res.text();
  let body: unknown = undefined;
  // Every body is a JSON envelope except the iCalendar feeds (PRODUCT P15).
  if (text && !res.headers.get('content-type')?.startsWith('text/calendar')) {
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${url} answered ${res.status} with a non-JSON body: ${text.slice(0, 200)}`);
    }
  }
  return { status: res.status, headers: res.headers, body: body as T, text };
}
