/**
 * Event descriptions are Markdown, written by whoever created the event, so
 * the renderer is built for hostile input (issue 58, s2, s3):
 *
 * - It builds DOM nodes directly (createElement, text nodes), never an HTML
 *   string: nothing is parsed as HTML, so raw HTML in a description is the
 *   text it is, and no Trusted Types sink is ever used (a host page with
 *   `require-trusted-types-for 'script'` renders it as any other).
 * - It is linear in the description's length. Blocks are read line by line;
 *   nesting (lists, quotes) comes from each line's own leading markers and is
 *   capped at MAX_NESTING, beyond which markers are text. Inline markup is
 *   matched with tables of each delimiter's next position (built once per
 *   paragraph, backwards), so an opener without its closer costs one look-up,
 *   never a search; nested inline markup is capped at MAX_NESTING too. No
 *   recursion is deeper than that cap, so no input can exhaust the stack.
 * - It counts its steps, and gives up past WORK_PER_CHAR a character: the
 *   caller then shows the description as plain text (widget.ts), so even a
 *   mistake here cannot freeze a host page or blank a widget.
 *
 * The subset: paragraphs, `#` headings (bold paragraphs: the card owns the
 * heading levels), `-`/`*`/`+` and `1.` lists, `>` quotes, ``` fences,
 * `---` rules, **strong**, __strong__, *em*, _em_, ~~strike~~, `code`,
 * [links](url) (http, https and mailto only, opening in a new tab with
 * rel="noopener nofollow ugc") and ![images](url), shown as their alt text.
 * Backslash escapes a punctuation character.
 */

/** Lists and quotes nested deeper than this, and inline markup inside this much markup, are text. */
export const MAX_NESTING = 6;
/** Steps the renderer may take per character of input (plus a constant) before it gives up. */
export const WORK_PER_CHAR = 40;

export class MarkdownTooComplex extends Error {
  constructor() {
    super('The description is too complex to render as Markdown.');
    this.name = 'MarkdownTooComplex';
  }
}

function safeHref(href: string): string | null {
  try {
    const url = new URL(href);
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

const INLINE_SPECIAL = /[\\`*_~[!]/;

interface Work {
  steps: number;
  readonly limit: number;
}

function step(work: Work, n = 1): void {
  work.steps += n;
  if (work.steps > work.limit) throw new MarkdownTooComplex();
}

/** For each position i, the first position ≥ i where `token` starts, or -1. */
function nextTable(text: string, token: string, work: Work): Int32Array {
  const next = new Int32Array(text.length + 2).fill(-1);
  for (let i = text.length - token.length; i >= 0; i--) {
    next[i] = text.startsWith(token, i) ? i : next[i + 1]!;
  }
  for (let i = Math.max(0, text.length - token.length + 1); i <= text.length; i++) next[i] = -1;
  step(work, text.length);
  return next;
}

/** Inline markup of one paragraph (or heading, or list item) into `into`. */
function renderInline(text: string, into: Node, work: Work): void {
  const tables = new Map<string, Int32Array>();
  const next = (token: string, from: number): number => {
    let table = tables.get(token);
    if (!table) tables.set(token, (table = nextTable(text, token, work)));
    return from < table.length ? table[from]! : -1;
  };
  const isSpace = (i: number) => i < 0 || i >= text.length || /\s/.test(text[i]!);

  const walk = (start: number, end: number, parent: Node, depth: number, inLink: boolean): void => {
    if (depth > MAX_NESTING) {
      parent.appendChild(document.createTextNode(text.slice(start, end)));
      step(work, end - start);
      return;
    }
    let plain = '';
    const flush = () => {
      if (plain) parent.appendChild(document.createTextNode(plain));
      plain = '';
    };
    const wrap = (tag: string, from: number, to: number) => {
      flush();
      const el = document.createElement(tag);
      walk(from, to, el, depth + 1, inLink);
      parent.appendChild(el);
    };
    let i = start;
    while (i < end) {
      step(work);
      const c = text[i]!;
      if (!INLINE_SPECIAL.test(c)) {
        // A run of ordinary characters at once.
        let j = i + 1;
        while (j < end && !INLINE_SPECIAL.test(text[j]!)) j++;
        plain += text.slice(i, j);
        step(work, j - i);
        i = j;
        continue;
      }
      if (c === '\\' && i + 1 < end && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
        plain += text[i + 1];
        i += 2;
        continue;
      }
      if (c === '`') {
        const close = next('`', i + 1);
        if (close !== -1 && close < end && close > i + 1) {
          flush();
          const code = document.createElement('code');
          code.textContent = text.slice(i + 1, close);
          parent.appendChild(code);
          i = close + 1;
          continue;
        }
      }
      const pair = text.slice(i, i + 2);
      if (pair === '**' || pair === '__' || pair === '~~') {
        const close = next(pair, i + 2);
        if (close !== -1 && close + 2 <= end && close > i + 2 && !isSpace(i + 2) && !isSpace(close - 1)) {
          wrap(pair === '~~' ? 's' : 'strong', i + 2, close);
          i = close + 2;
          continue;
        }
        plain += pair;
        i += 2;
        continue;
      }
      if (c === '*' || c === '_') {
        const close = next(c, i + 1);
        const doubled = close !== -1 && text[close + 1] === c;
        // `_` inside a word (snake_case) is a letter, not emphasis.
        const wordy = c === '_' && /\w/.test(text[i - 1] ?? '');
        if (close !== -1 && close < end && close > i + 1 && !doubled && !wordy && !isSpace(i + 1) && !isSpace(close - 1)) {
          wrap('em', i + 1, close);
          i = close + 1;
          continue;
        }
      }
      const image = c === '!' && text[i + 1] === '[';
      if ((c === '[' || image) && !inLink) {
        const open = image ? i + 1 : i;
        const close = next(']', open + 1);
        const paren = close !== -1 && text[close + 1] === '(' ? next(')', close + 2) : -1;
        if (close !== -1 && paren !== -1 && paren < end) {
          flush();
          if (image) {
            // An image in a description is its alt text: nothing loads.
            parent.appendChild(document.createTextNode(text.slice(open + 1, close)));
          } else {
            const href = safeHref(text.slice(close + 2, paren).trim());
            if (href) {
              const a = document.createElement('a');
              a.href = href;
              a.target = '_blank';
              a.rel = 'noopener nofollow ugc';
              walk(open + 1, close, a, depth + 1, true);
              parent.appendChild(a);
            } else {
              walk(open + 1, close, parent, depth + 1, true);
            }
          }
          i = paren + 1;
          continue;
        }
      }
      plain += c;
      i++;
    }
    flush();
  };
  walk(0, text.length, into, 0, false);
}

interface Line {
  /** The containers the line is in: `>` quotes and list levels, outermost first. */
  path: ('quote' | 'ul' | 'ol')[];
  /** Whether the line starts a list item (its innermost container). */
  item: boolean;
  text: string;
}

const LIST_MARKER = /^( *)([-*+]|\d{1,9}[.)]) +/;

/** `---`, `* * *`, `___`: three or more of one of those, spaces between (a loop, not a backtracking pattern). */
function isRule(text: string): boolean {
  const chars = text.replace(/ /g, '');
  return chars.length >= 3 && /^[-*_]/.test(chars) && [...chars].every((c) => c === chars[0]);
}

/** A heading's text without its closing `#`s. */
function headingText(rest: string): string {
  let end = rest.length;
  while (end > 0 && rest[end - 1] === ' ') end--;
  let hashes = end;
  while (hashes > 0 && rest[hashes - 1] === '#') hashes--;
  // Closing hashes count only after a space (or as the whole text).
  if (hashes < end && (hashes === 0 || rest[hashes - 1] === ' ')) end = hashes;
  return rest.slice(0, end).trim();
}

function classify(raw: string, work: Work): Line {
  let rest = raw;
  const path: Line['path'] = [];
  // Quote markers, up to the cap; more are text.
  while (path.length < MAX_NESTING) {
    const m = /^ {0,3}> ?/.exec(rest);
    if (!m) break;
    path.push('quote');
    rest = rest.slice(m[0].length);
    step(work, m[0].length);
  }
  const marker = LIST_MARKER.exec(rest);
  // A rule (`- - -`, `***`) is not a list item.
  if (marker && path.length < MAX_NESTING && !isRule(rest)) {
    // Two spaces of indentation a level; the level a line can reach is capped.
    const level = Math.min(Math.floor(marker[1]!.length / 2), MAX_NESTING - path.length - 1);
    for (let l = 0; l <= level; l++) path.push(/\d/.test(marker[2]!) ? 'ol' : 'ul');
    step(work, marker[0].length);
    return { path, item: true, text: rest.slice(marker[0].length) };
  }
  return { path, item: false, text: rest };
}

/** The description as DOM nodes, in a fragment the caller appends; throws MarkdownTooComplex past its work bound. */
export function renderMarkdown(markdown: string): DocumentFragment {
  const work: Work = { steps: 0, limit: WORK_PER_CHAR * markdown.length + 1_000 };
  const fragment = document.createDocumentFragment();
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  step(work, lines.length);

  // The open containers, outermost first, each with the element its next child goes into.
  const open: { kind: Line['path'][number]; el: HTMLElement; into: HTMLElement }[] = [];
  let paragraph: { lines: string[]; into: Node } | null = null;
  const target = (): Node => open[open.length - 1]?.into ?? fragment;
  const endParagraph = () => {
    if (!paragraph) return;
    const p = document.createElement('p');
    renderInline(paragraph.lines.join('\n'), p, work);
    paragraph.into.appendChild(p);
    paragraph = null;
  };
  const closeTo = (depth: number) => {
    while (open.length > depth) open.pop();
  };

  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!;
    step(work);
    if (/^ {0,3}```/.test(raw)) {
      // A fence: everything to the closing fence (or the end) is code, as text.
      endParagraph();
      const body: string[] = [];
      let m = n + 1;
      for (; m < lines.length && !/^ {0,3}```/.test(lines[m]!); m++) body.push(lines[m]!);
      step(work, m - n);
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      code.textContent = body.join('\n');
      pre.appendChild(code);
      target().appendChild(pre);
      n = m;
      continue;
    }
    if (raw.trim() === '') {
      endParagraph();
      // A blank line ends lists and quotes too (a list item's text is its own line).
      closeTo(0);
      continue;
    }
    const line = classify(raw, work);
    // Keep the containers this line shares with the open ones, close the rest, open what it adds.
    let shared = 0;
    while (shared < open.length && shared < line.path.length && open[shared]!.kind === line.path[shared]) shared++;
    // A new item at the same level closes the previous item (its `into`), not the list.
    const continuing = !line.item && paragraph !== null && shared === open.length && line.path.length <= open.length;
    if (continuing) {
      paragraph!.lines.push(line.text);
      continue;
    }
    endParagraph();
    closeTo(shared);
    for (let d = shared; d < line.path.length; d++) {
      const kind = line.path[d]!;
      const el = document.createElement(kind === 'quote' ? 'blockquote' : kind);
      target().appendChild(el);
      open.push({ kind, el, into: el });
    }
    if (line.item) {
      const innermost = open[open.length - 1]!;
      const li = document.createElement('li');
      innermost.el.appendChild(li);
      innermost.into = li;
      renderInline(line.text, li, work);
      continue;
    }
    const text = line.text;
    const heading = /^ {0,3}#{1,6}(?: +|$)/.exec(text);
    if (heading) {
      const p = document.createElement('p');
      const strong = document.createElement('strong');
      renderInline(headingText(text.slice(heading[0].length)), strong, work);
      p.appendChild(strong);
      target().appendChild(p);
      continue;
    }
    if (isRule(text)) {
      target().appendChild(document.createElement('hr'));
      continue;
    }
    paragraph = { lines: [text], into: target() };
  }
  endParagraph();
  return fragment;
}
