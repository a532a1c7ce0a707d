// Every relative link in the repository's Markdown resolves, anchors included (test/support/doc-links.ts): the README
// is a front page that sends readers to docs/, and text moved between them must keep its links. The table shows each
// check failing on a planted example before the whole repository is scanned.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchors, findBrokenLinks, slug, type MarkdownFile } from '../support/doc-links.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(): MarkdownFile[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' });
  return [...new Set(listed.split('\0'))]
    .filter((path) => path.endsWith('.md') && existsSync(join(ROOT, path)))
    .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}

const DOCS: MarkdownFile[] = [
  { path: 'README.md', text: '# loopguard\n## Install\n### The image\n## Install\n' },
  { path: 'docs/install.md', text: '# Installing\n## Kustomize: `config/default`\n## The test ground: a real kube-apiserver + etcd\n```sh\n# not a heading\n```\n' },
];
const PATHS = new Set(['README.md', 'docs/install.md', 'docs', 'src/main.ts', 'config/default']);
const problemsOf = (path: string, text: string) =>
  findBrokenLinks([...DOCS, { path, text }], (p) => PATHS.has(p) || p === path).map((p) => p.message);

describe('relative links in Markdown', () => {
  it('anchors headings as GitHub does', () => {
    expect(slug('Kustomize: `config/default`')).toBe('kustomize-configdefault');
    expect(slug('The test ground: a real kube-apiserver + etcd')).toBe('the-test-ground-a-real-kube-apiserver--etcd');
    expect(slug('10. Assumptions (to confirm on a live TKE cluster)')).toBe('10-assumptions-to-confirm-on-a-live-tke-cluster');
    expect(slug('The demo (`npm run demo -- --once`)')).toBe('the-demo-npm-run-demo------once');
    expect([...anchors(DOCS[0]!.text)]).toEqual(['loopguard', 'install', 'the-image', 'install-1']);
    expect([...anchors(DOCS[1]!.text)]).toEqual(['installing', 'kustomize-configdefault', 'the-test-ground-a-real-kube-apiserver--etcd']);
  });

  it.each([
    ['a file that does not exist', 'docs/x.md', 'see [it](nowhere.md)', /no such file or directory \(docs\/nowhere\.md\)/],
    ['a path resolved from the wrong directory', 'docs/x.md', 'see [main](src/main.ts)', /no such file or directory \(docs\/src\/main\.ts\)/],
    ['a path outside the repository', 'docs/x.md', 'see [it](../../elsewhere.md)', /points outside the repository/],
    ['an anchor the file does not have', 'docs/x.md', 'see [it](install.md#helm)', /docs\/install\.md has no heading with the anchor #helm/],
    ['an anchor of its own file that does not exist', 'README.md', 'see [it](#quick-start)', /README\.md has no heading with the anchor #quick-start/],
  ])('fails on %s', (_name, path, text, message) => {
    expect(problemsOf(path, text)).toEqual([expect.stringMatching(message)]);
  });

  it('passes good links, and ignores URLs, code and non-Markdown targets', () => {
    for (const [path, text] of [
      ['docs/x.md', 'see [main](../src/main.ts) and [config](../config/default/) and [home](../README.md#install-1)'],
      ['docs/x.md', 'see [it](install.md#kustomize-configdefault) and [site](https://example.com/a.md#b)'],
      ['CHANGELOG.md', 'see [it](docs/install.md#the-test-ground-a-real-kube-apiserver--etcd) and [image](docs/../README.md#the-image)'],
      ['docs/x.md', '## Here\nsee [it](#here) and [that](x.md#here)'],
      ['README.md', 'code: `[x](nowhere.md)` and\n```\n[y](nowhere.md)\n```\n[line](src/main.ts#L10)'],
    ] as const) {
      expect(problemsOf(path, text)).toEqual([]);
    }
  });

  it('holds for every Markdown file of the repository', () => {
    const files = markdownFiles();
    expect(files.some((f) => f.path === 'README.md')).toBe(true);
    expect(files.some((f) => f.path === 'docs/benchmarks.md')).toBe(true);
    const problems = findBrokenLinks(files, (p) => existsSync(join(ROOT, p))).map((p) => `${p.path}:${p.line}: ${p.message}`);
    expect(problems).toEqual([]);
  });
});
