/**
 * What a value costs in Lambda's answer. A proxy integration's response is
 * JSON whose `body` is itself a JSON string, so every byte a body's JSON
 * escapes (a quote, a backslash, a control character) is escaped again:
 * `"` is 4 bytes there, a control character 7. Lambda refuses a synchronous
 * response over 6,291,456 bytes (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html),
 * so answers are bounded in these bytes, not in characters.
 */

/** Lambda's synchronous response limit, in bytes. */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6_291_456;

/** What a page's answer may take at most, whatever its size limit says: the rest of the 6 MB is for the envelope and headers. */
export const ANSWER_BUDGET_BYTES = 5_000_000;

/** The bytes a text body (an iCalendar feed) takes inside the Lambda response that carries it. */
export function bodyBytes(body: string): number {
  return Buffer.byteLength(JSON.stringify(body)) - 2;
}

/** The bytes `value`, serialised as a body, takes inside the Lambda response that carries it. */
export function responseBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;
}

/**
 * The bytes a text takes inside Lambda's answer when an API response carries
 * it as a JSON string: its characters escaped twice (once by the body's JSON,
 * once by the response's), its quotes not counted. A printable ASCII
 * character is 1 byte, a quote or a backslash 4, a newline or a tab 3, any
 * other character its UTF-8 bytes. The contracts' maxima count these bytes
 * (lambdas/core/dataset.ts), so that a page at every maximum fits what
 * Lambda can return.
 */
export function textResponseBytes(text: string): number {
  return responseBytes(text) - 4;
}
