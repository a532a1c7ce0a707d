// Issue 22 #1: a TkeServiceConfig that governs several Ingresses is changed only if every Ingress naming it is
// selected, not opted out, and managed by the same policy; otherwise Conflict / SharedConfig, nothing written.
import { describe, expect, it } from '@jest/globals';
import type { Originals } from '../../../src/api/originals.js';
import { planPolicy } from '../../../src/plan/policy-plan.js';
import { gathered, HAND_MADE, l7Clb, namedIngress, NOW, OWNER, SKIP, snapshot } from './fixtures.js';

const CONFIG = 'shared-cfg';
const config = { name: CONFIG, spec: HAND_MADE, exists: true };
const front = namedIngress('front', 'lb-front', CONFIG);
const frontT = gathered(front, l7Clb('lb-front'), { config });

interface Row {
  name: string;
  /** The other Ingress naming the config, and which policy manages it (undefined: none selects it). */
  other: ReturnType<typeof namedIngress>;
  policy: string | undefined;
  /** In the snapshot's targets too (managed by OWNER), or only in the caches. */
  managed: boolean;
  rootCause: string;
  message?: RegExp;
  writes: boolean;
}

const rows: Row[] = [
  {
    name: 'the other Ingress is opted out (same policy): SharedConfig naming it, nothing written',
    other: namedIngress('back', 'lb-back', CONFIG, { [SKIP]: 'true' }),
    policy: OWNER,
    managed: true,
    rootCause: 'SharedConfig',
    message: /TkeServiceConfig shared-cfg also governs Ingress back \(opted out\).*of its own/,
    writes: false,
  },
  {
    name: 'the other Ingress is managed by another policy',
    other: namedIngress('back', 'lb-back', CONFIG),
    policy: 'shop/q',
    managed: false,
    rootCause: 'SharedConfig',
    message: /Ingress back \(managed by LoopbackPolicy shop\/q\)/,
    writes: false,
  },
  {
    name: 'the other Ingress is selected by no policy',
    other: namedIngress('back', 'lb-back', CONFIG),
    policy: undefined,
    managed: false,
    rootCause: 'SharedConfig',
    message: /Ingress back \(not selected by LoopbackPolicy shop\/p\)/,
    writes: false,
  },
  {
    name: 'both managed by this policy, neither opted out: the config is changed for both',
    other: namedIngress('back', 'lb-back', CONFIG),
    policy: OWNER,
    managed: true,
    rootCause: 'L7Loopback',
    writes: true,
  },
  {
    name: 'the other Ingress names another config: not shared',
    other: namedIngress('back', 'lb-back', 'own-cfg', { [SKIP]: 'true' }),
    policy: OWNER,
    managed: true,
    rootCause: 'L7Loopback',
    writes: true,
  },
];

describe('a TkeServiceConfig shared by several Ingresses', () => {
  it.each(rows)('$name', (row) => {
    const otherT = gathered(row.other, l7Clb(row.other.loadBalancerId ?? ''), { config: { name: CONFIG, spec: HAND_MADE, exists: true } });
    const s = snapshot(row.managed ? [frontT, otherT] : [frontT], { others: row.managed ? [] : [row.other], policies: { front: OWNER, back: row.policy } });
    const plan = planPolicy(s);
    const [f] = plan.targets;
    expect(f?.assessment.rootCause.id).toBe(row.rootCause);
    if (row.message) expect(f?.assessment.rootCause.message).toMatch(row.message);
    const writes = f?.plan.steps.some((st) => st.kind === 'DeclareInTkeServiceConfig') ?? false;
    expect(writes).toBe(row.writes);
    if (!row.writes) expect(f?.plan.steps).toEqual([]);
    // An opted-out Ingress stays Skipped: nothing of it is planned either.
    if (row.managed && row.other.annotations?.[SKIP]) {
      expect(plan.targets[1]?.assessment.verdict).toBe('Skipped');
      expect(plan.targets[1]?.plan.steps.filter((st) => st.kind !== 'AnnotateTarget')).toEqual([]);
    }
  });

  it('what this policy changed through the config before it was shared is given back, nothing more', () => {
    const back = namedIngress('back', 'lb-back', CONFIG, { [SKIP]: 'true' });
    const declared = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1, domains: [{ domain: 'shop.example.com', rules: [{ url: '/', healthCheck: { sourceIpType: 1 } }] }] }] } };
    const record: Originals = {
      v: 1,
      listeners: { 'lbl-80-lb-front': { keepaliveEnable: 0, keepaliveAdded: 'field' } },
      rules: { 'lbl-80-lb-front/loc-lb-front': { sourceIpType: 0, added: 'healthCheck' } },
      declaredAt: new Date(NOW.getTime() - 60_000).toISOString(),
      applied: ['listener/lbl-80-lb-front/keepaliveEnable', 'rule/lbl-80-lb-front/loc-lb-front/sourceIpType'],
      loadBalancerId: 'lb-front',
    };
    const held = gathered(front, l7Clb('lb-front', 1, 1), { config: { name: CONFIG, spec: declared, exists: true }, ownership: { originals: record, owner: OWNER } });
    const [f] = planPolicy(snapshot([held], { others: [back], policies: { back: OWNER } })).targets;
    expect(f?.assessment.rootCause.id).toBe('SharedConfig');
    expect(f?.plan.purpose).toBe('Release');
    // The originals declared back (restore), then TKE awaited: no new value is declared.
    expect(f?.plan.steps).toEqual([
      expect.objectContaining({ kind: 'DeclareInTkeServiceConfig', config: CONFIG, restore: true, edits: [expect.objectContaining({ kind: 'keepalive', value: 0 }), expect.objectContaining({ kind: 'ruleSource', value: 0 })] }),
      expect.objectContaining({ kind: 'AwaitTke', reason: 'OriginalsApplied' }),
    ]);
  });
});
