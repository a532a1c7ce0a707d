// The repository stands alone (issue 21 #3): nothing points outside it, and every document that code, docs, status
// messages, Events or CLI output cite is in it, with the section cited. The checks live in test/support/doc-citations.ts;
// the table below shows each one failing on a planted example before the whole repository is scanned.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProblems, sectionNames, sections, type TextFile } from '../support/doc-citations.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** What the repository ships and tests: every tracked (or new, not ignored) text file under these. */
const SCANNED = /^(src|sim|test|bench|lab|scripts|docs|charts|config|crds|\.ci)\/|^(README|CHANGELOG)\.md$|^Dockerfile$|^package\.json$/;

function repoFiles(): TextFile[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' });
  const out: TextFile[] = [];
  for (const path of new Set(listed.split('\0'))) {
    if (!SCANNED.test(path)) continue;
    let buf: Buffer;
    try {
      buf = readFileSync(join(ROOT, path));
    } catch {
      continue; // deleted in the work tree, not yet in the index
    }
    if (buf.includes(0)) continue; // binary
    out.push({ path, text: buf.toString('utf8') });
  }
  return out;
}

const DOC: TextFile = {
  path: 'docs/tencent-cloud.md',
  text: ['# Facts', '## 2. Annotations', 'text', '### Sub', 'more', '- **`enable` kept** always', '```', '## In code', '```', '## 8. Open questions', '1. one', '2. two', '## 9. Corrections', '| # | fact |', '|---|---|', '| 1 | a |', '| 2 | b |'].join('\n'),
};
// The planted citations spell the section sign and the quotes as escapes, so that this file's own text cites nothing.
const S = '\u00a7';
const Q = '\u0022';
const problemsOf = (text: string) => findProblems([DOC, { path: 'src/x.ts', text }]).map((p) => p.message);

describe('the repository stands alone', () => {
  it('reads numbered headings as sections, subsections included', () => {
    expect([...sections(DOC.text).keys()]).toEqual(['2', '8', '9']);
    expect(sections(DOC.text).get('2')).toContain('more');
    expect(sectionNames(DOC.text)).toEqual(['facts', 'annotations', 'sub', 'enable kept', 'open questions', 'corrections']);
  });

  it.each([
    ['a path outside the repository', `see ${['..', 'shared', 'docs', 'x.md'].join('/')}`, /points outside the repository/],
    ['an absolute path to the background notes', `from ${['', 'work', 'shared', 'seeds'].join('/')}`, /points outside the repository/],
    ['a background seed label', `(${'seed'} 004)`, /background seed/],
    ['a background note', `// landscape.md ${S}1.4`, /background note/],
    ['a background note without .md', `// controller-conventions ${S}2.3`, /without \.md/],
    ['a document without .md', `// tencent-cloud ${S}2`, /without \.md/],
    ['a file the repository does not have', `// nowhere.md ${S}2`, /nowhere\.md §2: no such file/],
    ['a section the file does not have', `// tencent-cloud.md ${S}12`, /no heading numbered 12/],
    ['an item the section does not have', `// tencent-cloud.md ${S}9 #1, #3`, /§9 #3: no item 3/],
    ['a named section the file does not have', `// tencent-cloud.md ${Q}Fields${Q}`, /"Fields": docs\/tencent-cloud\.md has no section by that name/],
    ['a name only a heading in code has', `// tencent-cloud.md ${Q}In code${Q}`, /"In code": docs\/tencent-cloud\.md has no section by that name/],
    ['a second name the file does not have', `// tencent-cloud.md ${Q}Sub${Q}, ${Q}Fields${Q}`, /"Fields": docs\/tencent-cloud\.md has no section by that name/],
    ['a name after a section number', `// tencent-cloud.md ${S}2 ${Q}Fields${Q}`, /"Fields": docs\/tencent-cloud\.md has no section by that name/],
    ['a named section of a file the repository does not have', `// nowhere.md ${Q}Sub${Q}`, /nowhere\.md "Sub": no such file/],
    ['an open question that does not exist', '// (open ' + 'questions 2 and 6)', /open question 6/],
  ])('fails on %s', (_name, text, message) => {
    expect(problemsOf(text)).toEqual([expect.stringMatching(message)]);
  });

  it('passes good citations, with or without a path, link or backticks', () => {
    for (const text of [`// tencent-cloud.md ${S}2`, `// docs/tencent-cloud.md ${S}9 #1, #2`, `[tencent-cloud.md](tencent-cloud.md) ${S}8`, `\`tencent-cloud.md\` ${S}9`, '// open question 2', `// docs/tencent-cloud.md ${Q}Sub${Q} and tencent-cloud.md ${Q}annotations${Q}, tencent-cloud.md ${Q}enable kept${Q}`, `// tencent-cloud.md ${S}2 ${Q}Sub${Q} and ${Q}Annotations${Q}`]) {
      expect(problemsOf(text)).toEqual([]);
    }
  });

  it('holds for every file the repository ships and tests', () => {
    const files = repoFiles();
    expect(files.some((f) => f.path === 'docs/tencent-cloud.md')).toBe(true);
    expect(files.length).toBeGreaterThan(100);
    const problems = findProblems(files).map((p) => `${p.path}:${p.line}: ${p.message}`);
    expect(problems).toEqual([]);
  });
});
