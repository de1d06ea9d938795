/// <reference lib="dom" />
/**
 * The widget's Markdown renderer (widget/src/markdown.ts) in Chromium, on the
 * inputs that break recursive or backtracking parsers (issue 58, s2): every
 * family at the contract's 20,000 characters renders within its work bound
 * (no fallback needed), the DOM it builds is never deeper than its nesting
 * cap and never has more nodes than the input has characters, and arbitrary strings of Markdown's special characters never make it
 * throw anything but its own bound (a property).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSync } from 'esbuild';
import fc from 'fast-check';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { chromiumPath } from '../support/browser.js';

const MAX = 20_000;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const bundle = buildSync({ entryPoints: [new URL('../../widget/src/markdown.ts', import.meta.url).pathname], bundle: true, format: 'iife', globalName: 'Md', write: false, target: ['chrome111'] }).outputFiles[0]!.text;
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'pe-chromium-')), {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  await context.route(/^https?:\/\//, (route) => route.abort());
  page = context.pages()[0] ?? (await context.newPage());
  await page.setContent('<!doctype html><html><body></body></html>');
  await page.addScriptTag({ content: bundle });
});
afterAll(async () => context?.close());

/**
 * What rendering one description does: throws (its name), the deepest element nesting, the nodes built.
 * Its cost is stated by counts, not a clock: the renderer's own step bound (WORK_PER_CHAR a character,
 * past which it throws) covers the parsing, and the node count the DOM it builds; a timed check failed
 * a loaded CI machine while the work was the same.
 */
function render(markdowns: string[]) {
  return page.evaluate((inputs) => {
    const md = (window as unknown as { Md: { renderMarkdown: (s: string) => DocumentFragment; MAX_NESTING: number } }).Md;
    const depthOf = (n: Node): number => {
      let most = 0;
      n.childNodes.forEach((c) => (most = Math.max(most, depthOf(c))));
      return most + (n.nodeType === 1 ? 1 : 0);
    };
    const nodesOf = (n: Node): number => {
      let count = 1;
      n.childNodes.forEach((c) => (count += nodesOf(c)));
      return count;
    };
    return inputs.map((input) => {
      try {
        const fragment = md.renderMarkdown(input);
        return { threw: null, depth: depthOf(fragment), nodes: nodesOf(fragment), nesting: md.MAX_NESTING };
      } catch (error) {
        return { threw: (error as Error).name, depth: 0, nodes: 0, nesting: md.MAX_NESTING };
      }
    });
  }, markdowns);
}

const fill = (unit: string) => unit.repeat(Math.floor(MAX / unit.length));

describe('the description renderer under hostile input', () => {
  const families: Record<string, string> = {
    'nested list markers': fill('* '),
    'indented list levels': Array.from({ length: 150 }, (_, i) => `${'  '.repeat(i)}- level ${i}`).join('\n').slice(0, MAX),
    'nested quotes': fill('> '),
    'unclosed links': fill(']('),
    'link openers': fill('['),
    'images in links': fill('[!['),
    'strong markers': fill('**'),
    'emphasis runs': fill('*a'),
    'underscores': fill('_'),
    'backticks': fill('`'),
    'backslashes': fill('\\'),
    'strikes': fill('~~'),
    'hashes': fill('#'),
    'spaces then a hash': `#${' '.repeat(MAX - 2)}#`,
    'nested emphasis': `${'**_'.repeat(3000)}x${'_**'.repeat(3000)}`,
    'one long link text': `[${'a'.repeat(MAX - 10)}](https://x)`,
    'fence without end': `\`\`\`\n${fill('x\n')}`,
    'lines of rules': fill('- - -\n'),
  };

  it('renders every family at 20,000 characters within its work bound, never deeper than its cap, never more nodes than characters', async () => {
    const names = Object.keys(families);
    const results = await render(Object.values(families));
    const seen = Object.fromEntries(names.map((n, i) => [n, results[i]!]));
    for (const [name, r] of Object.entries(seen)) {
      expect({ name, threw: r.threw }).toEqual({ name, threw: null });
      // Lists and quotes each add an element a level (li in ul), inline markup one: bounded by the cap whatever the input.
      expect({ name, deep: r.depth <= 3 * r.nesting + 4 }).toEqual({ name, deep: true });
      // Not throwing is the step bound held (snarkdown took seconds, or overflowed); the DOM is linear in the input too.
      expect({ name, linear: r.nodes <= families[name]!.length + 1 }).toEqual({ name, linear: true });
    }
  });

  it('never throws anything but its own work bound, whatever the mix of special characters (property)', async () => {
    const special = fc.constantFrom('*', '_', '`', '~', '[', ']', '(', ')', '!', '\\', '>', '#', '-', '+', '1.', ' ', '  ', '\n', '\n\n', 'a', 'https://x', 'é', '🎷');
    const inputs = fc.sample(fc.array(special, { maxLength: 400 }).map((parts) => parts.join('')), { numRuns: 300, seed: 58 });
    const results = await render(inputs);
    for (const [i, r] of results.entries()) expect({ input: inputs[i], threw: r.threw }).toEqual({ input: inputs[i], threw: null });
  });
});
