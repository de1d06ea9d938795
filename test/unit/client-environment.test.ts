/**
 * Where the client runs: a Public API key must stay on a server, so in a
 * browser the Public client refuses to be built unless explicitly allowed;
 * the Embed client (no key) is fine there. And the client's sources import
 * nothing from Node, so the Embed path bundles for browsers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { ConfigurationError, EmbedClient, PublicClient } from '../../client/src/index.js';
import { inBrowser } from '../../client/src/environment.js';

const KEY = 'pk_test_0123456789abcdefghijklmnopqrstuv';
const SRC = new URL('../../client/src/', import.meta.url);

describe('browser detection', () => {
  it('a page or a worker is a browser; Node is not, even with a DOM shim', () => {
    expect(inBrowser({ document: {} })).toBe(true);
    expect(inBrowser({ importScripts: () => undefined })).toBe(true);
    expect(inBrowser({ document: {}, process: { versions: { node: '20.19.0' } } })).toBe(false);
    expect(inBrowser({})).toBe(false);
    expect(inBrowser()).toBe(false);
  });
});

describe('in a browser', () => {
  /** Runs `run` (synchronously) with a `document` and without Node's `process`, as in a page. */
  function asBrowser(run: () => void) {
    const g = globalThis as { document?: unknown };
    const processDescriptor = Object.getOwnPropertyDescriptor(globalThis, 'process')!;
    Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true, writable: true });
    g.document = {};
    try {
      run();
    } finally {
      delete g.document;
      Object.defineProperty(globalThis, 'process', processDescriptor);
    }
  }

  it('the Public client refuses a key unless dangerouslyAllowBrowser is set; the Embed client is fine', () => {
    asBrowser(() => {
      expect(() => new PublicClient({ apiKey: KEY, baseUrl: 'https://api.example.com/api/public/v1' })).toThrow(ConfigurationError);
      expect(() => new PublicClient({ apiKey: KEY, baseUrl: 'https://api.example.com/api/public/v1', dangerouslyAllowBrowser: true })).not.toThrow();
      expect(() => new EmbedClient({ baseUrl: 'https://api.example.com/api/embed/v1' })).not.toThrow();
    });
    expect(inBrowser()).toBe(false);
  });
});

describe('configuration', () => {
  it('names what is missing, never a key', () => {
    const saved = process.env.PUBLIC_API_KEY;
    delete process.env.PUBLIC_API_KEY;
    try {
      expect(() => new PublicClient({ baseUrl: 'http://127.0.0.1:1/api/public/v1' })).toThrow('No API key: pass apiKey or set PUBLIC_API_KEY');
    } finally {
      if (saved !== undefined) process.env.PUBLIC_API_KEY = saved;
    }
  });
});

describe('the client sources', () => {
  it('import only each other (no Node module, nothing of the service)', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('embed-client.ts');
    for (const file of files) {
      const specifiers = [...readFileSync(new URL(file, SRC), 'utf8').matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1]!);
      for (const specifier of specifiers) expect(`${file}: ${specifier}`).toMatch(/: \.\/[\w/-]+\.js$/);
    }
  });
});
