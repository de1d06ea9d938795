/**
 * What the client reads from where it runs, without importing anything from
 * Node (so bundlers can ship it to browsers): the environment variables when
 * there is a `process`, and whether this is a browser page.
 */

export function envVar(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name];
  return value === '' ? undefined : value;
}

/** A page or a web worker: code there is public, so a key sent from there is public too. */
export function inBrowser(scope: object = globalThis): boolean {
  const g = scope as { document?: unknown; importScripts?: unknown; process?: { versions?: { node?: string } } };
  // Node (and test DOMs running in it, like jsdom) is a server, whatever globals it has.
  if (g.process?.versions?.node !== undefined) return false;
  return g.document !== undefined || typeof g.importScripts === 'function';
}

/** A path segment for a value: one segment exactly ("." and ".." would be dropped or climb in URL resolution). */
export function segment(name: string, value: string): string {
  if (value === '' || /^(?:\.|%2e){1,2}$/i.test(value)) throw new TypeError(`${name} must not be empty, "." or ".."`);
  return encodeURIComponent(value);
}
