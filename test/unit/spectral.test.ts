/**
 * The contract passes Spectral's OpenAPI rules and the OWASP API Security
 * rules (@stoplight/spectral-owasp-ruleset) with 0 errors, under the committed
 * ruleset .spectral.yaml, loaded the way the Spectral CLI loads it (the
 * ruleset bundler with its builtins and commonjs plugins), so an outside run
 * of the CLI counts what this test counts.
 *
 * Linted: the committed copies (docs/openapi/*.json) and the documents as
 * served, named by their URLs, for the default settings and for another
 * deployment's (key header name, dated variant).
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it, beforeAll } from '@jest/globals';
import { buildDocument, type DocumentOptions } from '../../lambdas/openapi/document.js';
import { SURFACES, type Surface } from '../../lambdas/routes.js';
import { DEFAULT_DOCUMENT_OPTIONS } from '../../local/schema-files.js';

// Spectral's packages are CommonJS whose named exports jest's ESM loader cannot see; Node's own require loads them, typed by their declarations.
const require = createRequire(import.meta.url);
const { Spectral, Document } = require('@stoplight/spectral-core') as typeof import('@stoplight/spectral-core');
const Parsers = require('@stoplight/spectral-parsers') as typeof import('@stoplight/spectral-parsers');
const { fetch } = require('@stoplight/spectral-runtime') as typeof import('@stoplight/spectral-runtime');
const { bundleAndLoadRuleset } = require('@stoplight/spectral-ruleset-bundler/with-loader') as typeof import('@stoplight/spectral-ruleset-bundler/with-loader');
const { builtins } = require('@stoplight/spectral-ruleset-bundler/plugins/builtins') as typeof import('@stoplight/spectral-ruleset-bundler/plugins/builtins');
const { commonjs } = require('@stoplight/spectral-ruleset-bundler/plugins/commonjs') as typeof import('@stoplight/spectral-ruleset-bundler/plugins/commonjs');

const ROOT = new URL('../../', import.meta.url).pathname;
const RULESET = join(ROOT, '.spectral.yaml');
const ERROR = 0; // DiagnosticSeverity.Error

interface Finding {
  rule: string;
  at: string;
}

let spectral: InstanceType<typeof Spectral>;

async function lint(source: string, text: string): Promise<{ errors: Finding[] }> {
  const results = await spectral.run(new Document(text, Parsers.Json, source));
  const errors = results.filter((r) => r.severity === ERROR);
  const finding = (r: (typeof results)[number]): Finding => ({ rule: String(r.code), at: r.path.join('.') });
  return {
    errors: errors.map(finding),
  };
}

const served = (surface: Surface, opts: DocumentOptions) => ({
  source: `http://127.0.0.1:3000${SURFACES[surface]}/openapi.json`,
  text: JSON.stringify(buildDocument(surface, opts)),
});

describe('Spectral with the OWASP API Security rules', () => {
  beforeAll(async () => {
    spectral = new Spectral();
    spectral.setRuleset(await bundleAndLoadRuleset(RULESET, { fs, fetch }, [builtins(), commonjs()]));
  }, 60_000);

  it.each(['public', 'embed'] as const)('docs/openapi/%s.json (the committed copy): 0 errors', async (surface) => {
    const file = join(ROOT, `docs/openapi/${surface}.json`);
    const { errors } = await lint(file, fs.readFileSync(file, 'utf8'));
    expect(errors).toEqual([]);
  });

  const other: DocumentOptions = { serviceName: 'gatherly', userEventsVariant: 'dated' };
  const deployments: Array<[Surface, DocumentOptions]> = [
    ['public', DEFAULT_DOCUMENT_OPTIONS],
    ['embed', DEFAULT_DOCUMENT_OPTIONS],
    ['public', other],
    ['embed', other],
  ];
  it.each(deployments)('the %s document as served (%j): 0 errors', async (surface, opts) => {
    const { source, text } = served(surface, opts);
    const { errors } = await lint(source, text);
    expect(errors).toEqual([]);
  });

  it('lints for real: the OWASP rules are loaded, and a surface-wide override goes by the file name or URL', async () => {
    expect(Object.keys(spectral.ruleset?.rules ?? {}).filter((rule) => rule.startsWith('owasp:api')).length).toBeGreaterThan(30);
    // The Public document under a name that says neither surface keeps its CORS errors: nothing else is overridden document-wide.
    const { text } = served('public', DEFAULT_DOCUMENT_OPTIONS);
    const { errors } = await lint(join(ROOT, 'unnamed.json'), text);
    expect(new Set(errors.map((e) => e.rule))).toEqual(new Set(['owasp:api8:2023-define-cors-origin']));
  });

  it('every override in .spectral.yaml says why on the line above it', () => {
    const lines = fs.readFileSync(RULESET, 'utf8').split('\n');
    const overrides = lines.flatMap((line, i) => (line === '  - files:' ? [i] : []));
    expect(overrides.length).toBeGreaterThan(0);
    for (const i of overrides) expect({ line: i + 1, reason: /^ {2}# Why: .{20,}$/.test(lines[i - 1] ?? '') }).toEqual({ line: i + 1, reason: true });
  });
});
