/**
 * The commands and requests the README and docs/*.md show a reader: every
 * line of their ```sh blocks, continuations joined, with the block's
 * variables (`KEY=…`) substituted into the requests. test/unit/docs-commands
 * and test/e2e/docs-requests hold each one to a test that runs it.
 *
 * One command substitution is understood, the one the pages use to ask for
 * today: `TODAY=$(date -u +%F)`, the UTC date, which a test fills with the
 * date of the server's clock (never the wall clock's), as a reader's shell
 * fills it with theirs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

export const DOC_PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

export interface ShownCommand {
  page: string;
  /** The command as shown, continuations joined, without its trailing comment. */
  command: string;
  /** The trailing `# …` comment, if any. */
  comment: string;
  /** The block's variables so far (`KEY=…` lines). */
  vars: Readonly<Record<string, string>>;
}

export function shownCommands(): ShownCommand[] {
  const shown: ShownCommand[] = [];
  for (const page of DOC_PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const [, body] of text.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
      const vars: Record<string, string> = {};
      for (const line of (body as string).replace(/\\\n\s*/g, '').split('\n')) {
        const comment = /\s#\s(.*)$/.exec(line)?.[1] ?? '';
        const command = line.replace(/\s+#\s.*$/, '').trim();
        if (command === '' || command.startsWith('#')) continue;
        const assignment = /^([A-Z_]+)=(\S+|\$\(date -u \+%F\))$/.exec(command);
        if (assignment) {
          vars[assignment[1] as string] = assignment[2] as string;
          continue;
        }
        shown.push({ page, command, comment, vars: { ...vars } });
      }
    }
  }
  return shown;
}

export interface ShownRequest {
  shown: ShownCommand;
  url: string;
  headers: Record<string, string>;
  /** The status the page says it gets: the leading number of its comment, else 200. */
  status: number;
}

/** What a shell would give for `$(date -u +%F)` (the one command substitution the pages use). */
export const TODAY_COMMAND = '$(date -u +%F)';

/**
 * A `curl` line as a request: its `-H` headers and its URL, the block's variables substituted,
 * `$(date -u +%F)` as the UTC date of `now` (the server's clock; a page that uses it needs one).
 */
export function asRequest(shown: ShownCommand, now?: Date): ShownRequest {
  const value = (name: string): string | undefined => {
    const v = shown.vars[name];
    if (v !== TODAY_COMMAND) return v;
    if (now === undefined) throw new Error(`${shown.page}: ${shown.command} uses $${name}, today's date: give asRequest the server's clock`);
    return now.toISOString().slice(0, 10);
  };
  const expand = (s: string) => s.replace(/\$([A-Z_]+)/g, (_, name: string) => value(name) ?? `$${name}`);
  const words = [...shown.command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => expand((m[1] ?? m[2] ?? m[3]) as string));
  const headers: Record<string, string> = {};
  let url = '';
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as string;
    if (word === '-H') {
      const [name, ...value] = (words[++i] as string).split(':');
      headers[(name as string).toLowerCase()] = value.join(':').trim();
    } else if (!word.startsWith('-')) {
      url = word;
    }
  }
  const status = /^(\d{3})\b/.exec(shown.comment)?.[1];
  return { shown, url, headers, status: status ? Number(status) : 200 };
}

export interface FencedBlock {
  page: string;
  /** The text between the previous block (or the page's start) and this one. */
  intro: string;
  lang: string;
  body: string;
}

/** Every fenced block of the README and docs/*.md, with the prose that introduces it. */
export function fencedBlocks(): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  for (const page of DOC_PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    let last = 0;
    for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
      blocks.push({ page, intro: text.slice(last, m.index), lang: m[1] as string, body: m[2] as string });
      last = (m.index as number) + m[0].length;
    }
  }
  return blocks;
}

/**
 * The blocks a page says come from a file of the repository: the sentence
 * just before the block ends by naming the file, "… (`path`):" or "… from `path`:".
 */
export function blocksFromFiles(): Array<FencedBlock & { file: string }> {
  return fencedBlocks().flatMap((block) => {
    const file = /(?:\(|\bfrom )`([\w./-]+\.\w+)`\)?:$/.exec(block.intro.trimEnd())?.[1];
    return file && existsSync(join(ROOT, file)) ? [{ ...block, file }] : [];
  });
}

/** The block that follows the prose containing `intro` on `page` (one, or the test fails naming it). */
export function blockAfter(page: string, intro: string): string {
  const found = fencedBlocks().filter((b) => b.page === page && b.intro.includes(intro));
  if (found.length !== 1) throw new Error(`${page}: expected one block after "${intro}", found ${found.length}`);
  return (found[0] as FencedBlock).body;
}
