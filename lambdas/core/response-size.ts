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

/** The bytes `value`, serialised as a body, takes inside the Lambda response that carries it. */
export function responseBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;
}
