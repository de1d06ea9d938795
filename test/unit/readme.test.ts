/**
 * The README and docs/ stay self-contained and true: no link leaves the
 * repository (relative links resolve to files in it; absolute ones only to
 * the local server `npm start` runs), and the README's example bodies are the
 * generated examples, which are real answers over the demo data.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { readmeExamples } from '../../local/readme-examples.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const markdown = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README and docs', () => {
  it.each(markdown)('%s: every link stays in the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).not.toContain('../shared');
    const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
    for (const target of targets) {
      if (/^https?:/.test(target)) {
        expect({ target, local: /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(target) }).toEqual({ target, local: true });
      } else if (!target.startsWith('#')) {
        const path = resolve(dirname(join(ROOT, file)), target.split('#')[0] as string);
        expect({ target, inRepo: path.startsWith(ROOT) && existsSync(path) }).toEqual({ target, inRepo: true });
      }
    }
  });

  it.each(readmeExamples().map((e) => [e.title, e] as const))('shows the generated example: %s', (_, example) => {
    expect(readme).toContain(`\`\`\`json\n${example.json}\n\`\`\``);
  });

  it('keeps a "Loading data" section in the operator part', () => {
    expect(readme.indexOf('\n## Loading data\n')).toBeGreaterThan(readme.indexOf('\n# For operators\n'));
    expect(readme.indexOf('\n# For operators\n')).toBeGreaterThan(readme.indexOf('\n# For API consumers\n'));
  });
});
