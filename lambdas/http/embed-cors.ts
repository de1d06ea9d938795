/**
 * The Embed API's CORS policy (PRODUCT P11), used by the Embed handlers, the
 * local gateway's preflight and error responses, and the CDK REST API.
 */
export const EMBED_CORS = {
  allowOrigin: '*',
  allowMethods: ['GET', 'OPTIONS'],
  allowHeaders: ['Content-Type'],
} as const;
