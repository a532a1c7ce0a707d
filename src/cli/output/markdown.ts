// Pure: Markdown for a pull-request comment or a ticket. A summary table, then one collapsible section per target
// that needs attention, with its plan and the topology alternatives (GitHub renders <details>).
import type { Report, TargetReport } from '../report.js';
import { needsDetails, targetLabel } from '../report.js';
import { locationCell, planCell, printable, profileLine, summaryLine, verdictCell } from './text.js';

/** Text inside a table cell or inline code: no pipe, no newline, no HTML. */
export function cell(text: string): string {
  return printable(text).replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');
}

export function code(text: string): string {
  return `\`${printable(text).replace(/`/g, "'")}\``;
}

export function details(t: TargetReport): string[] {
  const out = [`<details><summary>${cell(targetLabel(t))}: <b>${cell(verdictCell(t))}</b> (${cell(t.rootCause)})</summary>`, ''];
  out.push(cell(t.message), '');
  if (t.condition) out.push(`**Condition:** ${cell(t.condition)}`, '');
  if (t.plan.length > 0) {
    out.push('**Enforce would:**', '');
    t.plan.forEach((s, i) => out.push(`${i + 1}. ${cell(s)}`));
    out.push('');
  }
  if (t.planStops) out.push(`**The plan stops there:** ${cell(t.planStops)}`, '');
  for (const a of t.advice) out.push(`> ${cell(a)}`, '');
  if (t.alternatives.length > 0) {
    out.push('**Alternatives:**', '');
    for (const a of t.alternatives) out.push(`- ${cell(a.advice)} — ${cell(a.limits)} _(${cell(a.source)})_`);
    out.push('');
  }
  out.push('</details>', '');
  return out;
}

export function renderMarkdown(report: Report): string {
  const title = report.kind === 'PlanReport' ? 'loopguard plan' : 'loopguard doctor';
  const atRisk = report.counts.atRisk;
  const out = [`### ${title}: ${atRisk > 0 ? `${atRisk} target${atRisk === 1 ? '' : 's'} at risk of CLB loopback` : 'no CLB loopback risk'}`, ''];
  out.push(`${cell(profileLine(report.clusterProfile))}. ${cell(summaryLine(report))}.`, '');
  for (const n of report.notes) out.push(`> note: ${cell(n)}`, '');
  if (report.targets.length > 0) {
    const plan = report.kind === 'PlanReport';
    out.push(`| Target | ${plan ? 'Source' : 'CLB'} | Verdict | Root cause | Plan |`, '|---|---|---|---|---|');
    for (const t of report.targets) {
      const where = plan ? locationCell(t) : (t.loadBalancerId ?? '-');
      out.push(`| ${code(targetLabel(t))} | ${cell(where)} | ${t.verdict === 'AtRisk' ? '**' : ''}${cell(verdictCell(t))}${t.verdict === 'AtRisk' ? '**' : ''} | ${cell(t.rootCause)} | ${cell(planCell(t))} |`);
    }
    out.push('');
    for (const t of report.targets.filter(needsDetails)) out.push(...details(t));
  }
  return `${out.join('\n').trimEnd()}\n`;
}
