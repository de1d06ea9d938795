/**
 * The local stand-in for API Gateway's AWS_IAM authorization: a request must
 * carry a valid Signature Version 4 signature (service `execute-api`) made
 * with a documented local access key pair. The signature is recomputed with
 * the AWS SDK's own signer (@smithy/signature-v4) over exactly the headers
 * the request says it signed, and compared in constant time; a missing,
 * malformed, unknown, stale or wrong signature is refused with 403 and
 * API Gateway's message, as AWS would.
 *
 * What it does not stand in for: IAM policies (any holder of the local pair
 * may call every route) and session tokens. The pair is public and works only
 * against this loopback server.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

export interface LocalPrincipal {
  accessKeyId: string;
  secretAccessKey: string;
  /** What the handler sees as the caller (requestContext.identity.userArn). */
  principalArn: string;
}

/** The documented local access key pair (docs/managing-keys.md). Not an AWS credential. */
export const LOCAL_KEY_ADMIN_PRINCIPAL: LocalPrincipal = {
  accessKeyId: 'AKIALOCALKEYADMIN000',
  secretAccessKey: 'local-key-admin-secret-not-an-aws-secret',
  principalArn: 'arn:aws:iam::000000000000:role/local-web-product',
};

export const SIGNING_SERVICE = 'execute-api';
/** AWS refuses a signature whose time is more than five minutes from its own. */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface SignedRequest {
  method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  target: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Verdict = { ok: true; principal: LocalPrincipal } | { ok: false; message: string };

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

export async function verifySigV4(request: SignedRequest, principals: readonly LocalPrincipal[], now: Date): Promise<Verdict> {
  const authorization = header(request.headers, 'authorization');
  if (!authorization) return { ok: false, message: 'Missing Authentication Token' };
  const m = AUTHORIZATION.exec(authorization.trim());
  if (!m) return { ok: false, message: 'Authorization header requires a valid AWS4-HMAC-SHA256 Credential, SignedHeaders and Signature.' };
  const [, accessKeyId, day, region, service, signedList, signature] = m as unknown as [string, string, string, string, string, string, string];
  if (service !== SIGNING_SERVICE) return { ok: false, message: `Credential should be scoped to correct service: '${SIGNING_SERVICE}'.` };
  const principal = principals.find((p) => p.accessKeyId === accessKeyId);
  if (!principal) return { ok: false, message: 'The security token included in the request is invalid.' };
  const amzDate = header(request.headers, 'x-amz-date');
  const d = amzDate ? AMZ_DATE.exec(amzDate) : null;
  if (!d) return { ok: false, message: 'Authorization header requires existence of either a \'X-Amz-Date\' or a \'Date\' header.' };
  const signingDate = new Date(Date.UTC(+d[1]!, +d[2]! - 1, +d[3]!, +d[4]!, +d[5]!, +d[6]!));
  if (amzDate!.slice(0, 8) !== day) return { ok: false, message: 'Credential should be scoped to a valid date.' };
  if (Math.abs(now.getTime() - signingDate.getTime()) > MAX_CLOCK_SKEW_MS) return { ok: false, message: 'Signature expired: the request time is more than 5 minutes from the server time.' };
  const signed = signedList.split(';');
  if (!signed.includes('host')) return { ok: false, message: "'Host' must be a signed header." };

  // The signer takes a payload hash header as given; the body must really have that hash.
  const payloadHash = header(request.headers, 'x-amz-content-sha256');
  if (payloadHash !== undefined && payloadHash !== createHash('sha256').update(request.body, 'utf8').digest('hex')) {
    return { ok: false, message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  }
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = header(request.headers, name);
    if (value === undefined) return { ok: false, message: `Signed header ${name} is missing from the request.` };
    headers[name] = value;
  }
  const q = request.target.indexOf('?');
  const path = q < 0 ? request.target : request.target.slice(0, q);
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(q < 0 ? '' : request.target.slice(q + 1))) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  // applyChecksum off: the SDK's signer would otherwise add x-amz-content-sha256 and sign it, a header a client such as
  // `curl --aws-sigv4` neither sends nor signs (it is optional for execute-api), and every such request would be refused
  // as a mismatch that API Gateway accepts. A request that signed the header is checked with it (it is among `headers`).
  const signer = new SignatureV4({ service, region, sha256: Sha256, applyChecksum: false, credentials: { accessKeyId, secretAccessKey: principal.secretAccessKey } });
  const resigned = await signer.sign(
    { method: request.method, protocol: 'http:', hostname: headers.host!, path, query, headers, body: request.body },
    { signingDate },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization ?? ''))?.[1] ?? '';
  const same = expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
  if (!same) {
    return { ok: false, message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' };
  }
  return { ok: true, principal };
}
