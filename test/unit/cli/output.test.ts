// The text formats and the progress bar, on a report built by hand: what each shows, escaping of values anyone with
// `edit` on a target can write, and a progress bar only on a terminal and only for more CLBs than it has rows.
import { describe, expect, it } from '@jest/globals';
import { renderMarkdown } from '../../../src/cli/output/markdown.js';
import { progressBar, renderBar } from '../../../src/cli/output/progress.js';
import { renderTable } from '../../../src/cli/output/table.js';
import { buildReport, exitCodeOf, type TargetReport } from '../../../src/cli/report.js';
import { detectClusterProfile } from '../../../src/model/cluster-profile.js';

const profile = detectClusterProfile({ flags: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.20.6-tke.12' } });

function target(extra: Partial<TargetReport>): TargetReport {
  return {
    namespace: 'shop',
    kind: 'Service',
    name: 'web',
    verdict: 'NotApplicable',
    rootCause: 'MasqueradedToNodeIp',
    message: 'masqueraded',
    mitigations: [],
    plan: [],
    alternatives: [],
    advice: [],
    warnings: [],
    ...extra,
  };
}

const risky = target({
  name: 'orders',
  verdict: 'AtRisk',
  rootCause: 'PodSourceNotMasqueraded',
  loadBalancerId: 'lb-1',
  message: 'loops | back <b>',
  plan: ['set listener lbl-1 (TCP:80) of CLB lb-1: health-check source 100.64.0.0/10'],
  alternatives: [{ id: 'ServiceDnsName', advice: 'use orders.shop.svc.cluster.local', limits: 'no CLB on the path', source: 'TKE "CLB Loopback" https://www.tencentcloud.com/document/product/457/42976' }],
});

describe('report formats', () => {
  const report = buildReport('DoctorReport', profile, [target({}), risky], ['could not read LoopbackRecords'], new Date(0));

  it('sorts most severe first and exits 1 only on risk', () => {
    expect(report.targets.map((t) => t.name)).toEqual(['orders', 'web']);
    expect(exitCodeOf(report)).toBe(1);
    expect(exitCodeOf(report, true)).toBe(0);
    expect(exitCodeOf(buildReport('DoctorReport', profile, [target({})], [], new Date(0)))).toBe(0);
  });

  it('table: one row per target, details for the targets that need attention', () => {
    const text = renderTable(report, false);
    expect(text).toMatch(/^cluster profile: kube-proxy ipvs v1\.20\.6-tke\.12 \(from Flag\)/);
    expect(text).toContain('note: could not read LoopbackRecords');
    expect(text).toMatch(/NAMESPACE\s+KIND\s+NAME\s+CLB\s+VERDICT\s+ROOT CAUSE\s+PLAN\s+POLICY\n/);
    expect(text).toMatch(/shop\s+Service\s+orders\s+lb-1\s+AtRisk\s+PodSourceNotMasqueraded\s+1 step\s+\(defaults\)\n/);
    expect(text).toContain('Service shop/orders: AtRisk (PodSourceNotMasqueraded), CLB lb-1');
    expect(text).toContain('    1. set listener lbl-1 (TCP:80) of CLB lb-1: health-check source 100.64.0.0/10');
    expect(text).toContain('    - use orders.shop.svc.cluster.local\n      fixes and leaves: no CLB on the path\n      source: TKE "CLB Loopback" https://www.tencentcloud.com/document/product/457/42976');
    expect(text).not.toContain('Service shop/web:');
    expect(renderTable(report, true)).toContain('Service shop/web: NotApplicable');
    expect(text.trimEnd().split('\n').at(-1)).toBe('2 targets: 1 at risk, 1 not applicable');
  });

  it('markdown: table cells and text cannot break out of the table or inject HTML', () => {
    const md = renderMarkdown(report);
    expect(md).toContain('| `Service shop/orders` | lb-1 | **AtRisk** | PodSourceNotMasqueraded | 1 step | - |');
    expect(md).toContain('loops \\| back &lt;b&gt;');
    expect(md).not.toContain('<b>AtRisk</b> (MasqueradedToNodeIp)');
  });

  // Issue 22 #7: a manifest name is anyone's to choose and the comment lands in a pull request.
  it('markdown: a hostile name stays one inert cell: no table break, no image, link, mention or HTML', () => {
    const name = 'ok|![x](https://e.x) [login](https://e.x) @someone <img src=x> `a|b` **bold** # h see #12 and org/repo#3';
    const hostile = target({ name, verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded', message: `Service shop/${name} loops`, advice: [`- see ${name}`], plan: [`1. patch ${name}`] });
    const md = renderMarkdown(buildReport('PlanReport', profile, [hostile], [], new Date(0)));
    const lines = md.split('\n');
    // The table row: five cells, split as GFM does (on every `|` not escaped by a backslash, code spans included).
    const row = lines.find((l) => l.startsWith('| ') && l.includes('shop/ok')) ?? '';
    expect(row.split(/(?<!\\)\|/).slice(1, -1)).toHaveLength(5);
    // What is left once code spans (and the known tags) are taken out has nothing Markdown or GitHub would act on.
    const outsideCode = md
      .replace(/<code>.*?<\/code>/g, '')
      .replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, '')
      .replace(/<\/?(details|summary|b)>/g, '');
    expect(outsideCode).not.toMatch(/(?<!\\)!(?<!\\)\[|(?<!\\)\[[^\]]*(?<!\\)\]\(|@someone|https?:\/\/|<img|(?<!\\)\*\*bold|#\d/);
    expect(outsideCode.split('\n').slice(1).join('\n')).not.toMatch(/^\s*(#|- |\d+\. patch)/m); // the title is loopguard's
    // The raw HTML summary line shows the name as code (GitHub links no mention there), entities for the markup.
    expect(md).toContain('<summary><code>Service shop/ok|![x](https://e.x) [login](https://e.x) @someone &lt;img src=x&gt; `a|b` **bold** # h see #12 and org/repo#3</code>');
    // And the name is still all there to read, in the table's code span.
    expect(row).toContain('``Service shop/ok\\|![x](https://e.x) [login](https://e.x) @someone <img src=x> `a\\|b` **bold** # h see #12 and org/repo#3``');
  });

  it('terminal text has no control characters from annotations', () => {
    const evil = buildReport('DoctorReport', profile, [target({ verdict: 'AtRisk', message: 'a\u001b[2Jb' })], [], new Date(0));
    expect(renderTable(evil, false)).not.toContain('\u001b');
  });
});

describe('progress bar', () => {
  function stream(isTTY: boolean, rows = 24) {
    let written = '';
    return { isTTY, rows, columns: 80, write: (s: string) => ((written += s), true), text: () => written };
  }

  it('renders a bounded bar', () => {
    expect(renderBar('Reading CLBs', 45, 100, 80)).toBe(`Reading CLBs [${'#'.repeat(18)}${'-'.repeat(22)}]  45/100`);
    expect(renderBar('x', 5, 5, 20)).toMatch(/\[#+\] 5\/5$/);
  });

  it('only on a terminal, and only for more CLBs than the terminal has rows', () => {
    const pipe = stream(false);
    progressBar(pipe, 'Reading CLBs', 500).update(10);
    expect(pipe.text()).toBe('');
    const few = stream(true, 40);
    progressBar(few, 'Reading CLBs', 40).update(10);
    expect(few.text()).toBe('');
    const off = stream(true);
    progressBar(off, 'Reading CLBs', 500, false).update(10);
    expect(off.text()).toBe('');
    const tty = stream(true);
    const bar = progressBar(tty, 'Reading CLBs', 500);
    bar.update(250);
    bar.done();
    expect(tty.text()).toContain('\rReading CLBs [');
    expect(tty.text()).toContain('250/500');
    expect(tty.text().endsWith('\r')).toBe(true);
  });
});
