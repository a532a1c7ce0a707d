import { describe, expect, it } from '@jest/globals';
import { annotationProblems, checkedAnnotations } from '../../../src/api/annotation-checks.js';
import { IngressAnnotation, LoopguardAnnotation, ServiceAnnotation } from '../../../src/api/annotations.js';
import { clipText, printable, quoteValue } from '../../../src/api/text.js';

describe('annotationProblems', () => {
  it('checks every annotation loopguard reads on a target', () => {
    expect(checkedAnnotations('Service').sort()).toEqual(
      [LoopguardAnnotation.Skip, ServiceAnnotation.Mode, ServiceAnnotation.DirectAccess, ServiceAnnotation.TkeServiceConfig, ServiceAnnotation.LoadBalancerId, ServiceAnnotation.PreventLoopback].sort(),
    );
    expect(checkedAnnotations('Ingress').sort()).toEqual(
      [
        LoopguardAnnotation.Skip,
        IngressAnnotation.Mode,
        IngressAnnotation.DirectAccess,
        IngressAnnotation.TkeServiceConfig,
        IngressAnnotation.LoadBalancerId,
        IngressAnnotation.TkeServiceConfigAuto,
        IngressAnnotation.PassToTarget,
      ].sort(),
    );
  });

  it('accepts what TKE and loopguard write, with the tolerance the readers have', () => {
    expect(
      annotationProblems(
        {
          [LoopguardAnnotation.Skip]: ' False ',
          [ServiceAnnotation.Mode]: 'SKIP',
          [ServiceAnnotation.PreventLoopback]: 'true',
          [ServiceAnnotation.DirectAccess]: 'false',
          [ServiceAnnotation.TkeServiceConfig]: 'web-config.v2',
          [ServiceAnnotation.LoadBalancerId]: 'lb-abcd1234',
          'example.com/anything': '\u0000 not ours',
        },
        'Service',
      ),
    ).toEqual([]);
    expect(annotationProblems(undefined, 'Ingress')).toEqual([]);
  });

  it.each([
    ['Service', ServiceAnnotation.PreventLoopback, 'yes', 'expected "true" or "false"; loopguard treats it as not set'],
    ['Service', ServiceAnnotation.PreventLoopback, '-1', 'expected "true" or "false"'],
    ['Service', ServiceAnnotation.DirectAccess, '', 'expected "true" or "false"'],
    ['Service', LoopguardAnnotation.Skip, '{"skip": true}', 'opted out until it is fixed'],
    ['Service', ServiceAnnotation.Mode, 'skpi', 'expected "skip"'],
    ['Service', ServiceAnnotation.TkeServiceConfig, 'My Config', 'expected the name of a TkeServiceConfig'],
    ['Service', ServiceAnnotation.LoadBalancerId, 'lb-../../x', 'expected a CLB id such as lb-abcd1234'],
    ['Ingress', IngressAnnotation.PassToTarget, 'maybe', '"allow traffic by default" to TKE'],
    ['Ingress', IngressAnnotation.TkeServiceConfigAuto, '1', 'expected "true" or "false"'],
    ['Ingress', IngressAnnotation.TkeServiceConfig, 'x'.repeat(254), 'at most 253'],
    ['Ingress', IngressAnnotation.LoadBalancerId, 'LB-ABCD1234', 'expected a CLB id'],
  ] as const)('%s %s (case %#) is one problem naming the annotation and what is allowed', (kind, key, value, says) => {
    const problems = annotationProblems({ [key]: value }, kind);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.key).toBe(key);
    expect(problems[0]?.message).toContain(`annotation ${key}=`);
    expect(problems[0]?.message).toContain(says);
  });

  it('quotes a hostile value escaped and clipped, with its length', () => {
    const value = `tr\u0007ue\u001b[31m\u202e\u0085${'y'.repeat(300_000)}`;
    const [p] = annotationProblems({ [ServiceAnnotation.DirectAccess]: value }, 'Service');
    expect(p?.message.length).toBeLessThan(400);
    expect(p?.message).toContain('\\u0007');
    expect(p?.message).toContain('\\u202e');
    expect(p?.message).toContain('\\u0085');
    expect(p?.message).toContain('(300012 characters)');
    // eslint-disable-next-line no-control-regex
    expect(p?.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });

  it('does not apply Service-only checks to an Ingress', () => {
    expect(annotationProblems({ [ServiceAnnotation.PreventLoopback]: 'yes' }, 'Ingress')).toEqual([]);
  });
});

describe('text for messages', () => {
  it('clips by characters, never inside a surrogate pair', () => {
    expect(clipText('abcdef', 6)).toBe('abcdef');
    expect(clipText('abcdefg', 6)).toBe('abc...');
    const rockets = '🚀'.repeat(10);
    expect(clipText(rockets, 10)).toBe(rockets);
    expect(clipText(rockets, 6)).toBe('🚀🚀🚀...');
  });

  it('keeps Unicode text and shows a lone surrogate escaped', () => {
    expect(quoteValue('保护 web')).toBe('"保护 web"');
    expect(quoteValue('a\ud800b')).toBe('"a\\ud800b"');
  });

  it('replaces control and direction characters in printable text', () => {
    expect(printable('ok\u0000\u001b[0m\u202ex 保护', 100)).toBe('ok\ufffd\ufffd[0m\ufffdx 保护');
  });
});
