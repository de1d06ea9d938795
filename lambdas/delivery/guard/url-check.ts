/**
 * The checks of a webhook's URL: its syntax (no DNS), then every address its host resolves to. The management API
 * runs them at create; the guard's POST runs them again at every delivery, on its own resolution.
 */
import { isIP } from 'node:net';
import { classifyAddress, describeAddress, type AddressVerdict } from './address-classes.js';
import { LOOPBACK_RECEIVERS, type GuardPolicy, type Resolver } from './policy.js';
import { resolveHost, systemResolver } from './resolve.js';

export const MAX_URL_LENGTH = 2048;

/** For the management API's 400: `message` is a sentence naming what is wrong with the URL. */
export type UrlCheck = { ok: true; url: URL; addresses: readonly string[] } | { ok: false; message: string };

export type SyntaxCheck = { ok: true; url: URL } | { ok: false; message: string };

/** What the delivery side needs beside the message: which of the guard's error classes a refusal is. */
export type Screening =
  | { ok: true; url: URL; addresses: readonly AddressVerdict[] }
  | { ok: false; message: string; errorClass: 'url' | 'address' | 'dns' };

const LENGTH = MAX_URL_LENGTH.toLocaleString('en-US');
// A label of a host name as DNS carries it (the URL parser has lowercased it and turned an IDN into punycode).
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** The URL's host as an address (IPv6 without its brackets), or undefined for a host name. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname;
  if (host.startsWith('[')) return host.slice(1, -1);
  return isIP(host) === 4 ? host : undefined;
}

function isHostName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

/** Syntax only (no DNS): https, port 443 (explicit 443 fine), no user:password, <= 2,048 characters, a host name or literal address, no fragment. */
export function checkUrlSyntax(raw: string, policy: GuardPolicy): SyntaxCheck {
  const check = checkSyntax(raw, policy);
  return check.ok ? check : { ok: false, message: check.message };
}

const badUrl = (message: string) => ({ ok: false as const, message, errorClass: 'url' as const });

/** checkUrlSyntax, saying also whether a refusal is the URL's form or the literal address it names. */
function checkSyntax(raw: string, policy: GuardPolicy): { ok: true; url: URL } | { ok: false; message: string; errorClass: 'url' | 'address' } {
  if (typeof raw !== 'string') return badUrl('The URL must be a string.');
  if (raw.length > MAX_URL_LENGTH) return badUrl(`The URL is ${raw.length.toLocaleString('en-US')} characters long; at most ${LENGTH} are allowed.`);
  // The URL parser would quietly drop these (a tab or a newline anywhere, spaces at the ends): refused, not rewritten.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return badUrl('The URL must not contain spaces or control characters.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return badUrl('The URL is not an absolute URL such as https://hooks.example.com/path.');
  }
  const schemes = policy.allowLoopback ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return badUrl(`The URL must use https:// (its scheme is ${url.protocol.slice(0, -1)}).`);
  if (url.username !== '' || url.password !== '') return badUrl('The URL must not contain a user name or password.');
  if (url.href.includes('#')) return badUrl('The URL must not have a fragment (the part from #).');
  if (!policy.allowLoopback && url.port !== '') return badUrl(`The URL must use port 443 (it names port ${url.port}).`);
  if (url.href.length > MAX_URL_LENGTH) {
    return badUrl(`The URL is ${url.href.length.toLocaleString('en-US')} characters long once normalised (${url.href.slice(0, 40)}…); at most ${LENGTH} are allowed.`);
  }
  const literal = literalAddress(url);
  if (literal === undefined) return isHostName(url.hostname) ? { ok: true, url } : badUrl(`The URL's host ${url.hostname} is not a valid host name.`);
  const verdict = checkAddresses(url, [classifyAddress(literal)], policy, true);
  return verdict.ok ? { ok: true, url } : verdict;
}

/**
 * Every address must be public, except that `allowLoopback` lets a host whose every address is 127.0.0.1 or ::1
 * through, on any scheme it allows and any port; any other host keeps https on 443.
 */
function checkAddresses(
  url: URL,
  verdicts: readonly AddressVerdict[],
  policy: GuardPolicy,
  literal: boolean,
): { ok: true } | { ok: false; message: string; errorClass: 'url' | 'address' } {
  if (policy.allowLoopback && verdicts.every((v) => LOOPBACK_RECEIVERS.has(v.address))) return { ok: true };
  const bad = verdicts.find((v) => !v.public);
  if (bad) {
    // Under allowLoopback, a host with 127.0.0.1 among other addresses: say why the setting did not open it.
    const why = policy.allowLoopback && LOOPBACK_RECEIVERS.has(bad.address) ? ' (the local allow-loopback setting opens 127.0.0.1 and ::1 only to a host whose every address is one of them)' : '';
    const message = literal
      ? `The URL's host is ${describeAddress(bad)}: a webhook must reach a public address${why}.`
      : `The URL's host ${url.hostname} resolves to ${describeAddress(bad)}: a webhook's host must resolve only to public addresses${why}.`;
    return { ok: false, message, errorClass: 'address' };
  }
  if (url.protocol !== 'https:' || url.port !== '') {
    const message = 'The URL must use https:// on port 443: plain http and other ports are only for a receiver at 127.0.0.1 or ::1 under the local allow-loopback setting.';
    return { ok: false, message, errorClass: 'url' };
  }
  return { ok: true };
}

/** Syntax, then one resolution, then every address checked: what `checkUrl` and each delivery run. */
export async function screenUrl(raw: string, policy: GuardPolicy, resolver: Resolver): Promise<Screening> {
  const syntax = checkSyntax(raw, policy);
  if (!syntax.ok) return syntax;
  const { url } = syntax;
  const literal = literalAddress(url);
  if (literal !== undefined) return { ok: true, url, addresses: [classifyAddress(literal)] };
  const resolution = await resolveHost(url.hostname, resolver);
  if (!resolution.ok) return { ok: false, message: `The URL's host ${url.hostname} cannot be reached: ${resolution.reason}.`, errorClass: 'dns' };
  const verdicts = resolution.addresses.map(classifyAddress);
  const checked = checkAddresses(url, verdicts, policy, false);
  return checked.ok ? { ok: true, url, addresses: verdicts } : checked;
}

/** Syntax, then resolution: every address the host resolves to must be public unicast. */
export async function checkUrl(raw: string, policy: GuardPolicy, resolver: Resolver = systemResolver): Promise<UrlCheck> {
  const screening = await screenUrl(raw, policy, resolver);
  return screening.ok ? { ok: true, url: screening.url, addresses: screening.addresses.map((v) => v.address) } : { ok: false, message: screening.message };
}
