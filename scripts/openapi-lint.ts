/**
 * `npm run openapi:lint -- [--ruleset FILE] [FILE …]`: lints OpenAPI documents
 * with Spectral under the committed ruleset (.spectral.yaml: spectral:oas and
 * the OWASP API Security rules, with the project's overrides), loaded as the
 * Spectral CLI loads it, and prints the errors and warnings per document and
 * rule. Without FILEs: docs/openapi/public.json and embed.json. Exit status 1
 * when any document has an error. test/unit/spectral.test.ts holds the same
 * count at 0 in `npm test`.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

// Spectral's packages are CommonJS; typed by their own declarations.
const require = createRequire(import.meta.url);
const { Spectral, Document } = require('@stoplight/spectral-core') as typeof import('@stoplight/spectral-core');
const Parsers = require('@stoplight/spectral-parsers') as typeof import('@stoplight/spectral-parsers');
const { fetch } = require('@stoplight/spectral-runtime') as typeof import('@stoplight/spectral-runtime');
const { bundleAndLoadRuleset } = require('@stoplight/spectral-ruleset-bundler/with-loader') as typeof import('@stoplight/spectral-ruleset-bundler/with-loader');
const { builtins } = require('@stoplight/spectral-ruleset-bundler/plugins/builtins') as typeof import('@stoplight/spectral-ruleset-bundler/plugins/builtins');
const { commonjs } = require('@stoplight/spectral-ruleset-bundler/plugins/commonjs') as typeof import('@stoplight/spectral-ruleset-bundler/plugins/commonjs');

const ROOT = new URL('../', import.meta.url).pathname;
const { values, positionals } = parseArgs({ options: { ruleset: { type: 'string' } }, allowPositionals: true });
const ruleset = resolve(values.ruleset ?? `${ROOT}.spectral.yaml`);
const files = positionals.length > 0 ? positionals.map((f) => resolve(f)) : [`${ROOT}docs/openapi/public.json`, `${ROOT}docs/openapi/embed.json`];

const spectral = new Spectral();
spectral.setRuleset(await bundleAndLoadRuleset(ruleset, { fs, fetch }, [builtins(), commonjs()]));
let failed = false;
for (const file of files) {
  const results = await spectral.run(new Document(fs.readFileSync(file, 'utf8'), Parsers.Json, file));
  const count = (severity: number) => {
    const byRule = new Map<string, number>();
    for (const r of results.filter((x) => x.severity === severity)) byRule.set(String(r.code), (byRule.get(String(r.code)) ?? 0) + 1);
    return byRule;
  };
  const errors = count(0);
  const warnings = count(1);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(`${file.replace(ROOT, '')}: ${total(errors)} errors, ${total(warnings)} warnings\n`);
  for (const [rule, n] of errors) process.stdout.write(`  error    ${rule}: ${n}\n`);
  for (const [rule, n] of warnings) process.stdout.write(`  warning  ${rule}: ${n}\n`);
  if (total(errors) > 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
