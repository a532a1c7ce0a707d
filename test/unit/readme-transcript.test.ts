// The demo's output as the README and docs/demo.md show it is held to a real run by test/integration/demo.test.ts
// through missingFromOutput (test/support/readme.ts): here, on planted transcripts, what it lets differ between runs
// (ids, private VIPs, ages, shortened messages) and what it does not (a changed, missing or reordered line).
import { describe, expect, it } from '@jest/globals';
import { missingFromOutput, textBlock } from '../support/readme.js';

const OUTPUT = [
  '== running the operator',
  '$ kubectl get lbp -n loopguard-demo',
  'NAME        MODE    TARGETS   AT RISK   READY   AGE',
  'audit-all   Audit   4         2         True    12s',
  '  Service/orders         AtRisk         PodSourceNotMasqueraded',
  '      In-cluster calls to VIP 10.100.0.3 reach the CLB with the pod IP (IPVS kube-proxy skips the masquerade)',
  '      Enforce would: set listener lbl-syz19w71 (TCP:80) of CLB lb-ow4p5jky: health-check source 100.64.0.0/10',
  '  Service/storefront     NotApplicable  PublicClb',
].join('\n');

const DOCUMENTED = [
  '$ kubectl get lbp -n loopguard-demo',
  'NAME        MODE    TARGETS   AT RISK   READY   AGE',
  'audit-all   Audit   4         2         True    2s',
  '',
  '  Service/orders         AtRisk         PodSourceNotMasqueraded',
  '      In-cluster calls to VIP 10.100.0.7 reach the CLB with the pod IP (…)',
  '      Enforce would: set listener lbl-podd9k6x (TCP:80) of CLB lb-lyd5i47v: health-check source 100.64.0.0/10   ',
  '  Service/storefront     NotApplicable  PublicClb',
];

describe('a documented transcript against a real run', () => {
  it('matches when only ids, private VIPs, ages, shortened messages, blank lines and trailing blanks differ', () => {
    expect(missingFromOutput(DOCUMENTED.join('\n'), OUTPUT)).toEqual([]);
  });

  it.each([
    ['a changed verdict', (d: string[]) => d.map((l) => l.replace('NotApplicable', 'AtRisk       ')), ['  Service/storefront     AtRisk         PublicClb']],
    ['a changed count', (d: string[]) => d.map((l) => l.replace('Audit   4 ', 'Audit   5 ')), ['audit-all   Audit   5         2         True    <age>']],
    ['a shortened line whose beginning changed', (d: string[]) => d.map((l) => l.replace('reach the CLB', 'skip the CLB')), ['      In-cluster calls to VIP 10.100.<vip> skip the CLB with the pod IP (…)']],
    ['two lines in the wrong order', (d: string[]) => [d[4]!, d[0]!], ['$ kubectl get lbp -n loopguard-demo']],
    ['a line the run does not print', (d: string[]) => [...d, '  Service/legacy         Skipped        SkipAnnotation'], ['  Service/legacy         Skipped        SkipAnnotation']],
  ])('reports %s', (_name, change, missing) => {
    expect(missingFromOutput(change(DOCUMENTED).join('\n'), OUTPUT)).toEqual(missing);
  });

  it('takes the first ```text block of a section', () => {
    expect(textBlock('intro\n```sh\nnpm run demo\n```\n```text\n$ kubectl get lbp\n```\n```text\nlater\n```\n')).toBe('$ kubectl get lbp\n');
    expect(() => textBlock('no transcript here')).toThrow(/no ```text block/);
  });
});
