// Relative links in the repository's Markdown resolve: the README is a front page that sends readers to docs/, and
// docs/ link to each other and to ../src, ../config…; text moved between them must keep its links working. Pure
// checks over file texts (the unit test plants a broken example of each kind, then scans the repository):
//  - a link to a path names a file or directory of the repository (relative to the linking file);
//  - a link with a `#fragment` to a Markdown file (or to the file itself) names one of its headings, as GitHub
//    anchors them (lower case, punctuation dropped, spaces to hyphens, repeats numbered -1, -2, …).
// Links in fenced code blocks and inline code are not links; absolute URLs are not checked (no network here).
import { posix } from 'node:path';

export interface MarkdownFile {
  /** Path relative to the repository root, with `/`. */
  path: string;
  text: string;
}

export interface LinkProblem {
  path: string;
  line: number;
  message: string;
}

/** GitHub's anchor for a heading's text: inline code and link syntax unwrapped, then slugged. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file's headings get, in order, with GitHub's -1, -2 … for repeats. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(markdown).split('\n')) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Fenced code blocks blanked (line count kept), so that their text is neither a heading nor a link. */
function withoutCode(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/**
 * Broken relative links of `files`. `exists` says whether a repository path (file or directory, no trailing
 * slash) exists; Markdown files are looked up in `files` for their anchors.
 */
export function findBrokenLinks(files: readonly MarkdownFile[], exists: (path: string) => boolean): LinkProblem[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const problems: LinkProblem[] = [];
  for (const file of files) {
    const lines = withoutCode(file.text).split('\n');
    lines.forEach((raw, i) => {
      const text = raw.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
      const at = (message: string) => problems.push({ path: file.path, line: i + 1, message });
      for (const m of text.matchAll(LINK)) {
        const target = m[1] ?? '';
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
        const [rawPath = '', fragment] = target.split('#', 2) as [string, string | undefined];
        const path = rawPath === '' ? file.path : posix.normalize(posix.join(posix.dirname(file.path), decodeURI(rawPath))).replace(/\/$/, '');
        if (path.startsWith('..')) {
          at(`${target}: points outside the repository`);
          continue;
        }
        if (!exists(path)) {
          at(`${target}: no such file or directory (${path})`);
          continue;
        }
        if (fragment === undefined || !path.endsWith('.md')) continue;
        const doc = byPath.get(path);
        if (doc && !anchors(doc.text).has(fragment)) at(`${target}: ${path} has no heading with the anchor #${fragment}`);
      }
    });
  }
  return problems;
}
