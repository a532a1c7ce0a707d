// The demo's before/after report (scripts/demo-clb.ts): what it says changed, stayed, or was not restored.
import { describe, expect, it } from '@jest/globals';
import { built, describeChanges, differences, type DemoTarget, type Facts } from '../../scripts/demo-clb.js';

const before: Facts = [
  ['TCP:80 health-check source', 'VIP (0)'],
  ['prevent-loopback annotation', 'absent'],
  ['backends (DescribeTargetHealth)', '6 Alive'],
];

describe('demo CLB report', () => {
  it.each<[string, Facts, string[]]>([
    [
      'a change, an unchanged fact',
      [
        ['TCP:80 health-check source', '100.64.0.0/10 (1)'],
        ['prevent-loopback annotation', '"true"'],
        ['backends (DescribeTargetHealth)', '6 Alive'],
      ],
      ['TCP:80 health-check source: VIP (0) → 100.64.0.0/10 (1)', 'prevent-loopback annotation: absent → "true"', 'backends (DescribeTargetHealth): 6 Alive (unchanged)'],
    ],
    ['backends going Dead', [['backends (DescribeTargetHealth)', '4 Alive, 2 Dead']], ['backends (DescribeTargetHealth): 6 Alive → 4 Alive, 2 Dead']],
    ['a fact that was not there before', [['HTTP:80 keepalive', 'on (1)']], ['HTTP:80 keepalive: on (1)']],
  ])('describeChanges: %s', (_what, after, lines) => {
    expect(describeChanges(before, after)).toEqual(lines);
  });

  it('differences: none when restored, each differing or missing fact otherwise', () => {
    expect(differences(before, [...before].reverse())).toEqual([]);
    expect(differences(before, [before[0]!, ['prevent-loopback annotation', '"true"']])).toEqual([
      'prevent-loopback annotation: absent vs "true"',
      'backends (DescribeTargetHealth): 6 Alive vs —',
    ]);
  });

  const ingress: DemoTarget = { kind: 'Ingress', name: 'api', loadBalancerId: 'lb-1', annotations: {}, paths: 2 };
  /** An L7 listener's facts: its keepalive, then one health-check source per rule path. */
  const l7 = (listener: string, paths: string[]): Facts => [[`${listener} keepalive`, 'off (0)'], ...paths.map((p): [string, string] => [`${listener} a.example${p} health-check source`, 'VIP (0)'])];
  it.each<[string, DemoTarget, Facts, boolean]>([
    ['an Ingress before TKE made its listener', ingress, [['backends (DescribeTargetHealth)', 'none']], false],
    ['an Ingress listener before TKE made its rules', ingress, [...l7('HTTP:80', []), ['backends (DescribeTargetHealth)', 'none']], false],
    ['one rule of two paths', ingress, l7('HTTP:80', ['/x']), false],
    ['a rule per path on one listener of two', ingress, [...l7('HTTP:80', ['/x', '/y']), ...l7('HTTPS:443', ['/x'])], false],
    ['both listeners complete', ingress, [...l7('HTTP:80', ['/x', '/y']), ...l7('HTTPS:443', ['/x', '/y'])], true],
    ['a Service (no L7 listener)', { kind: 'Service', name: 's', loadBalancerId: 'lb-2', annotations: {} }, before, true],
  ])('built: %s', (_what, target, facts, done) => {
    expect(built(target, facts)).toBe(done);
  });
});
