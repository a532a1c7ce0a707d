// Pure: Markdown for a pull-request comment or a ticket. A summary table, then one collapsible section per target
// that needs attention, with its plan and the topology alternatives (GitHub renders <details>).
import type { Report, TargetReport } from '../report.js';
import { needsDetails, targetLabel } from '../report.js';
import { coverageLine, locationCell, planCell, printable, profileLine, summaryLine, verdictCell } from './text.js';

// Everything a cell shows can come from a manifest or a cluster object that anyone with `edit` on it writes (names,
// annotations quoted in messages), and the comment is rendered where links, images and @mentions act (issue 22 #7).
// So text is inert by construction: Markdown punctuation is escaped, HTML becomes entities, and what a backslash
// cannot neutralise on GitHub (@mentions and bare URLs, which it links after rendering) goes into a code span, where
// GitHub links nothing. In a GFM table `|` splits cells before inline parsing, even inside a code span: `\|` there.
type Where = 'table' | 'text';

/** Mentions (@user, @org/team, e-mail addresses), issue references (#12, org/repo#12, GH-12) and the URLs GFM links. */
const LINKABLE = /@[A-Za-z0-9][\w./-]*|(?:\b[\w.-]+\/[\w.-]+)?#\d+\b|\bGH-\d+\b|\b(?:https?|ftp):\/\/[^\s<>]*|\bwww\.[^\s<>]*/gi;

/** Inline code showing `text` as it is, whatever backticks it holds (CommonMark: a longer fence, padded). */
export function code(text: string, where: Where = 'table'): string {
  let body = printable(text).replace(/\n/g, ' ');
  if (where === 'table') body = body.replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** Plain text with no Markdown or HTML effect: punctuation escaped, <>& as entities, no block marker at the start. */
function inert(text: string): string {
  const escaped = text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_[\]!|~]/g, (c) => `\\${c}`);
  return escaped.replace(/^(\s*)([#+=-])/, '$1\\$2').replace(/^(\s*\d+)([.)])/, '$1\\$2');
}

/** Text inside a table cell or a line of its own: one line, inert, mentions and URLs as code. */
export function cell(text: string, where: Where = 'table'): string {
  const line = printable(text).replace(/\n/g, ' ');
  let out = '';
  let last = 0;
  for (const m of line.matchAll(LINKABLE)) {
    out += inert(line.slice(last, m.index)) + code(m[0], where);
    last = m.index + m[0].length;
  }
  return out + inert(line.slice(last));
}

/** Text inside raw HTML (the <summary> line is an HTML block: Markdown is not parsed there, mentions still are). */
export function html(text: string): string {
  return printable(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, ' ');
}

export function details(t: TargetReport): string[] {
  // The target's label in <code>: GitHub links no mention inside it.
  const out = [`<details><summary><code>${html(targetLabel(t))}</code>: <b>${html(verdictCell(t))}</b> (${html(t.rootCause)})</summary>`, ''];
  out.push(cell(t.message, 'text'), '');
  const coverage = coverageLine(t);
  if (coverage) out.push(cell(coverage, 'text'), '');
  if (t.condition) out.push(`**Condition:** ${cell(t.condition, 'text')}`, '');
  if (t.measured) out.push(`**Measured:** ${cell(t.measured, 'text')}`, '');
  if (t.plan.length > 0) {
    out.push('**Enforce would:**', '');
    t.plan.forEach((s, i) => out.push(`${i + 1}. ${cell(s, 'text')}`));
    out.push('');
  }
  if (t.planStops) out.push(`**The plan stops there:** ${cell(t.planStops, 'text')}`, '');
  for (const a of t.advice) out.push(`> ${cell(a, 'text')}`, '');
  if (t.alternatives.length > 0) {
    out.push('**Alternatives:**', '');
    for (const a of t.alternatives) out.push(`- ${cell(a.advice, 'text')} — ${cell(a.limits, 'text')} _(${cell(a.source, 'text')})_`);
    out.push('');
  }
  out.push('</details>', '');
  return out;
}

/** The Policy cell (doctor): the covering policy as code, **uncovered**, or a dash (the defaults). */
export function policyMarkdown(t: TargetReport): string {
  return t.policy ? code(t.policy) : t.uncovered ? '**uncovered**' : '-';
}

export function renderMarkdown(report: Report): string {
  const title = report.kind === 'PlanReport' ? 'loopguard plan' : 'loopguard doctor';
  const atRisk = report.counts.atRisk;
  const out = [`### ${title}: ${atRisk > 0 ? `${atRisk} target${atRisk === 1 ? '' : 's'} at risk of CLB loopback` : 'no CLB loopback risk'}`, ''];
  out.push(`${cell(profileLine(report.clusterProfile), 'text')}. ${cell(summaryLine(report), 'text')}.`, '');
  for (const a of report.account?.advice ?? []) out.push(`> account: ${cell(a, 'text')}`, '');
  for (const n of report.notes) out.push(`> note: ${cell(n, 'text')}`, '');
  if (report.targets.length > 0) {
    const plan = report.kind === 'PlanReport';
    out.push(`| Target | ${plan ? 'Source' : 'CLB'} | Verdict | Root cause | Plan |${plan ? '' : ' Policy |'}`, `|---|---|---|---|---|${plan ? '' : '---|'}`);
    for (const t of report.targets) {
      const where = plan ? locationCell(t) : (t.loadBalancerId ?? '-');
      const policy = plan ? '' : ` ${policyMarkdown(t)} |`;
      out.push(`| ${code(targetLabel(t))} | ${cell(where)} | ${t.verdict === 'AtRisk' ? '**' : ''}${cell(verdictCell(t))}${t.verdict === 'AtRisk' ? '**' : ''} | ${cell(t.rootCause)} | ${cell(planCell(t))} |${policy}`);
    }
    out.push('');
    for (const t of report.targets.filter(needsDetails)) out.push(...details(t));
  }
  return `${out.join('\n').trimEnd()}\n`;
}
