/**
 * The key-management API's routes (an IAM-only REST API for the web product,
 * lib/key-admin.ts): not part of the Public or Embed route table
 * (lambdas/routes.ts), of their OpenAPI documents, or of their APIs. The CDK
 * construct, the handler and the local server all read this list.
 */
export const KEY_ADMIN_BASE_PATH = '/admin/v1';

export const KEY_ADMIN_ROUTES = [
  { op: 'create', method: 'POST', path: '/keys' },
  // A key belongs to a user id (PRODUCT P3): the path names the web product's user id, never a username.
  { op: 'list', method: 'GET', path: '/users/{userId}/keys' },
  { op: 'revoke', method: 'DELETE', path: '/users/{userId}/keys/{keyId}' },
  // The first release's revoke named no user: it answers 410 with the path to use (docs/managing-keys.md).
  { op: 'revokeWithoutUser', method: 'DELETE', path: '/keys/{keyId}' },
  // A key's webhooks (PRODUCT P18): managed like keys, by user id and key id (webhook-handler.ts).
  { op: 'createWebhook', method: 'POST', path: '/users/{userId}/keys/{keyId}/webhooks' },
  { op: 'listWebhooks', method: 'GET', path: '/users/{userId}/keys/{keyId}/webhooks' },
  { op: 'getWebhook', method: 'GET', path: '/users/{userId}/keys/{keyId}/webhooks/{webhookId}' },
  { op: 'deleteWebhook', method: 'DELETE', path: '/users/{userId}/keys/{keyId}/webhooks/{webhookId}' },
  { op: 'rotateWebhookSecret', method: 'POST', path: '/users/{userId}/keys/{keyId}/webhooks/{webhookId}/rotate-secret' },
  { op: 'resumeWebhook', method: 'POST', path: '/users/{userId}/keys/{keyId}/webhooks/{webhookId}/resume' },
] as const;

export type KeyAdminRoute = (typeof KEY_ADMIN_ROUTES)[number];
export type KeyAdminOperation = KeyAdminRoute['op'];

/** The route of an API Gateway event: its resource template (with the base path) and method. */
export function keyAdminRouteFor(resource: string | undefined, method: string | undefined): KeyAdminRoute | undefined {
  return KEY_ADMIN_ROUTES.find((r) => `${KEY_ADMIN_BASE_PATH}${r.path}` === resource && r.method === method);
}

/** Matches a concrete path (the local server's job; API Gateway does it in AWS): the route and its path parameters. */
export function matchKeyAdminPath(method: string, path: string): { route: KeyAdminRoute; pathParameters: Record<string, string> } | undefined {
  for (const route of KEY_ADMIN_ROUTES) {
    if (route.method !== method) continue;
    const names: string[] = [];
    const pattern = `${KEY_ADMIN_BASE_PATH}${route.path}`.replace(/[.]/g, '\\.').replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const m = new RegExp(`^${pattern}$`).exec(path);
    if (!m) continue;
    try {
      return { route, pathParameters: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) };
    } catch {
      return undefined; // a malformed escape matches nothing, as API Gateway answers it
    }
  }
  return undefined;
}
