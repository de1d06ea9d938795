/**
 * Event descriptions are Markdown. snarkdown (1 KB) turns them into an HTML
 * string; that string is never inserted into the page. It is parsed into an
 * inert document (DOMParser: no scripts run, nothing loads) and rebuilt, node
 * by node, from an allowlist of text elements, so whatever the parser emits,
 * only these elements, text and checked links reach the host page.
 *
 * Raw HTML in a description is escaped before parsing, so it shows as the
 * text it is. Links keep only http(s) and mailto targets and open in a new
 * tab with rel="noopener nofollow ugc"; images become their alt text.
 */
import snarkdown from 'snarkdown';

/** Parsed element → element built (h1-h6 become bold paragraphs: the card owns the heading levels). */
const ALLOWED: Record<string, string> = {
  P: 'p',
  BR: 'br',
  STRONG: 'strong',
  B: 'strong',
  EM: 'em',
  I: 'em',
  S: 's',
  DEL: 's',
  CODE: 'code',
  PRE: 'pre',
  UL: 'ul',
  OL: 'ol',
  LI: 'li',
  BLOCKQUOTE: 'blockquote',
  HR: 'hr',
};

function safeHref(href: string | null): string | null {
  if (!href) return null;
  try {
    const url = new URL(href);
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function rebuild(from: Node, into: Node): void {
  from.childNodes.forEach((node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      into.appendChild(document.createTextNode(node.textContent ?? ''));
      return;
    }
    if (!(node instanceof Element)) return;
    const tag = node.tagName;
    let out: Node;
    if (tag === 'A') {
      const href = safeHref(node.getAttribute('href'));
      if (!href) return rebuild(node, into);
      const a = document.createElement('a');
      a.href = href;
      a.target = '_blank';
      a.rel = 'noopener nofollow ugc';
      out = a;
    } else if (tag === 'IMG') {
      into.appendChild(document.createTextNode(node.getAttribute('alt') ?? ''));
      return;
    } else if (/^H[1-6]$/.test(tag)) {
      out = document.createElement('p');
      const strong = document.createElement('strong');
      out.appendChild(strong);
      rebuild(node, strong);
      into.appendChild(out);
      return;
    } else if (ALLOWED[tag]) {
      out = document.createElement(ALLOWED[tag]);
    } else {
      // Anything else keeps its text only.
      return rebuild(node, into);
    }
    rebuild(node, out);
    into.appendChild(out);
  });
}

/** The description as DOM nodes, in a fragment the caller appends. */
export function renderMarkdown(markdown: string): DocumentFragment {
  const escaped = markdown.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const inert = new DOMParser().parseFromString(`<body>${snarkdown(escaped)}</body>`, 'text/html');
  const fragment = document.createDocumentFragment();
  rebuild(inert.body, fragment);
  return fragment;
}
