// The repository stands alone: every document it cites is in it (issue 21 #3). Pure checks over file texts, so the
// unit test can prove on planted examples that each one fails, and then run them on the whole repository.
//  - no path outside the repository (the background notes the project was started from are not shipped);
//  - no "seed N" labels of those notes: the public documents are cited by name or URL (docs/tencent-cloud.md §7);
//  - every `name.md §n` names a Markdown file of the repository that has a heading numbered n, and every
//    `§n #k` a row (or list item) k in that section; every "open question k" an item of tencent-cloud.md §8;
//  - every `name.md` followed by words in double quotes (after its § number, if any; several, separated by commas)
//    names a section of that file whose heading, or the bold lead-in of a paragraph or list item (`**Drift checks**
//    …`), starts with those words (any case; inline-code marks and a heading's number aside);
//  - a document is cited with its `.md` suffix (a bare `architecture` before the section sign is refused), so the
//    check above sees it.

export interface TextFile {
  /** Path relative to the repository root, with `/`. */
  path: string;
  text: string;
}

export interface Problem {
  path: string;
  line: number;
  message: string;
}

// Built from parts so that this file does not itself contain what it forbids.
const OUTSIDE = [['..', 'shared'].join('/'), ['shared', 'docs'].join('/'), ['shared', 'seeds'].join('/'), ['', 'work', 'shared'].join('/')];
const SEED = new RegExp(`\\b${'seed'}s? 00\\d`, 'i');
/** The background notes' file names: never cited, with or without `.md`. */
const BACKGROUND = ['tke-clb', 'landscape', 'controller-conventions', 'test-ground', 'containers'];
const CITATION = /([\w./-]+\.md)[`\])]*\s*§\s*(\d+(?:\.\d+)*)((?:\s*,?\s*#\d+)*)/g;
const NAMED = /([\w./-]+\.md)[`\])]*(?:\s*§\s*\d+(?:\.\d+)*)? ("[^"]+"(?:,? (?:and )?"[^"]+")*)/g;
const OPEN_QUESTION = /open questions? (\d+)((?:(?:,| and) \d+)*)/g;

/** Section numbers of a Markdown file's headings ("## 9. Corrections", "### 1.4 Exact…") with the text under each. */
export function sections(markdown: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | undefined;
  for (const line of markdown.split('\n')) {
    const h = /^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/.exec(line);
    if (h) {
      current = h[1]!;
      out.set(current, '');
    } else if (/^#{1,6}\s/.test(line)) {
      // An unnumbered heading one level up ends nothing we track; subsections stay inside their section.
      continue;
    } else if (current !== undefined) {
      out.set(current, `${out.get(current)}${line}\n`);
    }
  }
  return out;
}

/** The names a Markdown file's sections go by: its headings (without their numbers) and its bold lead-ins, lower case. */
export function sectionNames(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const name = fenced ? undefined : (/^#{1,6}\s+(?:\d+(?:\.\d+)*\.?\s+)?(.*)$/.exec(line) ?? /^\s*(?:[-*] )?\*\*([^*]+)\*\*/.exec(line))?.[1];
    if (name) out.push(name.replaceAll('`', '').toLowerCase());
  }
  return out;
}

/** Whether a section holds item k: a table row `| k |` or a list item `k.`. */
function hasItem(section: string, k: string): boolean {
  return new RegExp(`^(\\|\\s*${k}\\s*\\||\\s*${k}\\.\\s)`, 'm').test(section);
}

export function findProblems(files: readonly TextFile[]): Problem[] {
  const markdown = files.filter((f) => f.path.endsWith('.md'));
  const docNames = new Set([...markdown.map((f) => basename(f.path).replace(/\.md$/, '')), ...BACKGROUND]);
  const bareDoc = new RegExp(`(?<![\\w./-])(${[...docNames].map(escape).join('|')}) §`, 'g');
  const tencent = markdown.find((f) => f.path === 'docs/tencent-cloud.md');
  const openQuestions = tencent ? sections(tencent.text).get('8') : undefined;
  const problems: Problem[] = [];

  for (const file of files) {
    const lines = file.text.split('\n');
    lines.forEach((text, i) => {
      const at = (message: string) => problems.push({ path: file.path, line: i + 1, message });
      const outside = OUTSIDE.find((o) => text.includes(o));
      if (outside) at(`points outside the repository (${outside})`);
      if (SEED.test(text)) at('cites a background seed: cite the public document (docs/tencent-cloud.md §7)');
      for (const m of text.matchAll(bareDoc)) at(`cites ${m[1]} without .md: write ${m[1]}.md §…`);
      for (const m of text.matchAll(CITATION)) {
        const [, cited, section, items] = m as unknown as [string, string, string, string];
        const name = basename(cited);
        if (BACKGROUND.includes(name.replace(/\.md$/, ''))) {
          at(`cites ${cited}, a background note that is not in the repository`);
          continue;
        }
        const targets = markdown.filter((f) => f.path === cited || f.path.endsWith(`/${cited}`) || basename(f.path) === name);
        if (targets.length === 0) {
          at(`cites ${cited} §${section}: no such file in the repository`);
          continue;
        }
        const found = targets.map((t) => sections(t.text).get(section)).find((s) => s !== undefined);
        if (found === undefined) {
          at(`cites ${cited} §${section}: ${targets[0]!.path} has no heading numbered ${section}`);
          continue;
        }
        for (const k of items.match(/\d+/g) ?? []) if (!hasItem(found, k)) at(`cites ${cited} §${section} #${k}: no item ${k} in that section`);
      }
      for (const [, cited, quoted] of text.matchAll(NAMED) as unknown as Iterable<[string, string, string]>) {
        const targets = markdown.filter((f) => f.path === cited || f.path.endsWith(`/${cited}`) || basename(f.path) === basename(cited));
        for (const [, words] of quoted.matchAll(/"([^"]+)"/g) as unknown as Iterable<[string, string]>) {
          if (targets.length === 0) at(`cites ${cited} "${words}": no such file in the repository`);
          else if (!targets.some((t) => sectionNames(t.text).some((n) => n.startsWith(words.toLowerCase())))) at(`cites ${cited} "${words}": ${targets[0]!.path} has no section by that name`);
        }
      }
      for (const m of text.matchAll(OPEN_QUESTION)) {
        for (const k of `${m[1]}${m[2]}`.match(/\d+/g) ?? []) {
          if (!openQuestions || !hasItem(openQuestions, k)) at(`cites open question ${k}: not an item of docs/tencent-cloud.md §8`);
        }
      }
    });
  }
  return problems;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}
