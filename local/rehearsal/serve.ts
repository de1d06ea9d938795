/**
 * `npm run rehearse -- --serve`: one stage's rehearsal kept up for requests of
 * your own (curl, the client, the admin client), with the banner that says
 * where: each API's base URL on its loopback port, each custom domain of the
 * template, the demo key and a request to start from.
 */
import { SURFACES } from '../../lambdas/core/surfaces.js';
import { KEY_ADMIN_BASE_PATH } from '../../lambdas/key-admin/routes.js';
import type { Rehearsal } from './rehearsal.js';

/** A request every stage answers 200 with the demo data and the demo key. */
const SAMPLE_PATH = '/events/evt_jazz01';

/** The base URL of each surface (and of the key-management API, when the template has it). */
export function servedBases(rehearsal: Rehearsal): { name: string; url: string }[] {
  const bases = Object.entries(SURFACES).map(([surface, prefix]) => ({
    name: `${surface === 'public' ? 'Public' : 'Embed'} API`,
    url: rehearsal.urlFor(`${prefix}/openapi.json`).replace(/\/openapi\.json$/, ''),
  }));
  const keyAdmin = rehearsal.apis.find((a) => a.id.startsWith('KeyAdminApi'));
  if (keyAdmin) bases.push({ name: 'Key admin', url: `${keyAdmin.url}${KEY_ADMIN_BASE_PATH}` });
  return bases;
}

export function serveBanner(stage: string, rehearsal: Rehearsal): string {
  const bases = servedBases(rehearsal);
  const publicUrl = bases.find((b) => b.name === 'Public API')!.url;
  const embedUrl = bases.find((b) => b.name === 'Embed API')!.url;
  const edges = rehearsal.distributions.map((d) => ({ name: 'Embed edge', url: `${d.url} (CloudFront ${d.domainName}: the Embed API, and the widget under /embed/)` }));
  const width = Math.max(...[...bases, ...edges].map((b) => b.name.length), 'Demo key'.length) + 1;
  const line = (name: string, value: string) => `  ${`${name}:`.padEnd(width + 1)} ${value}`;
  return [
    `Rehearsal of ${stage} (${rehearsal.assembly.stackName}, ${rehearsal.assembly.synthesized ? 'synthesized' : 'kept assembly'} ${rehearsal.assembly.dir}), serving until Ctrl-C:`,
    ...bases.map((b) => line(b.name, b.name === 'Key admin' ? `${b.url} (AWS_IAM: requests signed with the local key pair, docs/managing-keys.md)` : b.url)),
    ...rehearsal.domains.map((d) => line(d.name, `${d.url} (the custom domain, routed by its base paths)`)),
    ...edges.map((e) => line(e.name, e.url)),
    line('Demo key', rehearsal.demoKey.key),
    '',
    'Try:',
    `  curl -H 'Authorization: Bearer ${rehearsal.demoKey.key}' ${publicUrl}${SAMPLE_PATH}`,
    `  curl ${embedUrl}${SAMPLE_PATH}`,
    '',
    'Function logs go to stderr. Ctrl-C stops it and lists anything AWS would have refused (calls outside a role, function errors).',
    '',
  ].join('\n');
}
