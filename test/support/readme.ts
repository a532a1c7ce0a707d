// The README's sections as the tests that run its commands read them. One way to find a section, so that a README
// rewrite that renames or moves one fails with the heading it looked for, not with an empty command list.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

/**
 * The text under `heading` (a whole heading line, e.g. "### Helm") in a Markdown file of the repository, up to the
 * next heading of the same or a higher level. Throws when the file has no such heading.
 */
export function markdownSection(heading: string, file = 'README.md'): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  if (level === 0) throw new Error(`not a heading: ${heading}`);
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  let fenced = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^\s*```/.test(line)) fenced = !fenced;
    const h = fenced ? null : /^(#+)\s/.exec(line);
    if (h && (h[1] ?? '').length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start + 1, end).join('\n');
}

/** The lines of a section's fenced `sh` blocks, in order: continuations joined, comments and blank lines dropped. */
export function shellLines(section: string): string[] {
  const lines: string[] = [];
  for (const m of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of (m[1] ?? '').replace(/\\\n\s*/g, '').split('\n')) lines.push(line.replace(/\s+#.*$/, '').trim());
  }
  return lines.filter(Boolean);
}

/** A section's fenced `sh` blocks, each whole as written: a block is one script (quotes may span its lines). */
export function shellBlocks(section: string): string[] {
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

/** The first fenced `text` block of a section: a transcript the README or a doc shows. */
export function textBlock(section: string): string {
  const m = /```text\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('the section has no ```text block');
  return m[1] ?? '';
}

/**
 * A transcript line with what differs between runs made equal: CLB and listener ids, a private CLB's VIP (the emulator
 * hands them out in the order TKE's controllers create CLBs, which varies), a `kubectl get`'s AGE.
 */
function normalized(line: string): string {
  return line
    .replace(/\b10\.100\.\d{1,3}\.\d{1,3}\b/g, '10.100.<vip>')
    .replace(/\blbl-[a-z0-9]{8}\b/g, 'lbl-<id>')
    .replace(/\blb-[a-z0-9]{8}\b/g, 'lb-<id>')
    .replace(/^(audit-all\s.*\s)\d+[smh]$/, '$1<age>')
    .trimEnd();
}

/**
 * The lines of a documented transcript that the real output does not show, in the documented order. Each documented
 * line must match a later output line than the one before it; a line shortened with a trailing ` (…)` matches a
 * longer output line that starts with what comes before it. Empty when the output shows the whole transcript.
 */
export function missingFromOutput(documented: string, output: string): string[] {
  const out = output.split('\n').map(normalized);
  const missing: string[] = [];
  let from = 0;
  for (const line of documented.split('\n').map(normalized)) {
    if (line === '') continue;
    const shortened = /^(.*) \(…\)$/.exec(line)?.[1];
    const at = out.findIndex((o, i) => i >= from && (shortened === undefined ? o === line : o.length > shortened.length && o.startsWith(shortened)));
    if (at < 0) missing.push(line);
    else from = at + 1;
  }
  return missing;
}
