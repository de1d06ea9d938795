/**
 * The README and docs/ stay self-contained and true: every page is reachable
 * from the README, no link leaves the repository (relative links resolve to
 * files in it, anchors to headings of the page they name; absolute ones only
 * to the local server `npm start` runs), and the example bodies the pages
 * show are the generated examples, which are real answers over the demo data.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { readmeExamples } from '../../local/readme-examples.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const markdown = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Markdown with its fenced code blocks blanked, so a `#` comment or a `](` in code is not read as a heading or a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ' '));
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = (heading as string)
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every link target of a page (inline links and images), outside code. */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

/** A relative link's target file (relative to the repository root) and its anchor. */
function target(from: string, link: string): { file: string; anchor: string | undefined; inRepo: boolean } {
  const [path, anchor] = link.split('#') as [string, string | undefined];
  const absolute = path === '' ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), path);
  return { file: relative(ROOT, absolute), anchor, inRepo: absolute.startsWith(ROOT) && existsSync(absolute) };
}

describe('README and docs', () => {
  it('the README is an entry page of at most 250 lines with the two quick-start commands', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    expect(readme).toContain('```sh\nnpm ci && npm start\n```');
    expect(readme).toContain('```sh\nnpm test\n```');
  });

  it.each(markdown)('%s: every link stays in the repository and every anchor resolves', (file) => {
    const text = read(file);
    expect(text).not.toContain('../shared');
    for (const link of links(text)) {
      if (/^[a-z]+:/i.test(link)) {
        // Absolute URLs only to the local server npm start runs: the docs lead nowhere a reader cannot follow offline.
        expect({ link, local: /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(link) }).toEqual({ link, local: true });
        continue;
      }
      const { file: linked, anchor, inRepo } = target(file, link);
      expect({ link, inRepo }).toEqual({ link, inRepo: true });
      if (anchor !== undefined && linked.endsWith('.md')) {
        expect({ link, anchorFound: anchors(read(linked)).has(anchor) }).toEqual({ link, anchorFound: true });
      }
    }
  });

  it('every docs page is reachable from the README', () => {
    const reached = new Set<string>(['README.md']);
    const queue = ['README.md'];
    while (queue.length > 0) {
      const page = queue.shift() as string;
      for (const link of links(read(page))) {
        if (/^[a-z]+:/i.test(link) || link.startsWith('#')) continue;
        const { file } = target(page, link);
        if (file.endsWith('.md') && !reached.has(file) && existsSync(join(ROOT, file))) {
          reached.add(file);
          queue.push(file);
        }
      }
    }
    expect(markdown.filter((page) => !reached.has(page))).toEqual([]);
  });

  it('the README links every docs page itself, one hop away', () => {
    const direct = new Set(links(read('README.md')).filter((l) => !/^[a-z]+:/i.test(l)).map((l) => target('README.md', l).file));
    expect(markdown.filter((page) => page !== 'README.md' && page !== 'docs/README.md' && !direct.has(page))).toEqual([]);
  });

  it.each(readmeExamples().map((e) => [e.title, e] as const))('shows the generated example: %s', (_, example) => {
    expect(read(example.page)).toContain(`\`\`\`json\n${example.json}\n\`\`\``);
  });

  it('anchors follow GitHub: punctuation dropped, code marks dropped, repeats numbered', () => {
    expect([...anchors('# Operations: metrics, dashboard and alarms (runbook)\n## A `b` c\n## A `b` c\n```sh\n# not a heading\n```\n')]).toEqual([
      'operations-metrics-dashboard-and-alarms-runbook',
      'a-b-c',
      'a-b-c-1',
    ]);
  });
});
