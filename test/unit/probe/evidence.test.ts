// The evidence and the judgement (docs/probe.md §11): pure, from node windows to the line status shows.
import { describe, expect, it } from '@jest/globals';
import type { ProbeTargetResult } from '../../../src/api/probe.js';
import type { Verdict } from '../../../src/api/loopbackpolicy.js';
import { accumulate, aggregate, EMPTY_EVIDENCE, formatLatency, isStale, judge, measuredCondition, renderJudgement, type NodeWindow, type TargetEvidence } from '../../../src/probe/evidence.js';

const r = (failures: number, stalls: number, probes = 40, p99Ms?: number, p50Ms?: number): ProbeTargetResult => ({ id: 'x', probes, failures, stalls, notRun: 0, ...(p50Ms !== undefined ? { p50Ms } : {}), ...(p99Ms !== undefined ? { p99Ms } : {}) });
const w = (node: string, results: ProbeTargetResult[], whole = true): NodeWindow => ({ node, whole, results });

describe('aggregate', () => {
  it('sums the nodes, takes the worst p99 and the median p50, names the nodes that saw failures or stalls', () => {
    const e = aggregate([w('node-3', [r(4, 0, 20, 4200, 3)]), w('node-1', [r(8, 8, 20, 5190, 2)]), w('node-2', [r(0, 0, 20, 3, 1)])]);
    expect(e).toEqual({ probes: 60, failures: 12, stalls: 8, notRun: 0, p50Ms: 2, p99Ms: 5190, nodes: ['node-1', 'node-3'], windows: 3, full: true });
  });
  it('a window shorter than the plan’s, or one that probed nothing, is not full', () => {
    expect(aggregate([w('a', [r(0, 0)], false)]).full).toBe(false);
    expect(aggregate([w('a', [r(0, 0, 0)])]).full).toBe(false);
    expect(aggregate([]).windows).toBe(0);
  });
  it('a target’s entries (ports, hosts) add up', () => {
    expect(aggregate([w('a', [r(1, 0, 10, 7), r(0, 2, 10, 3500)])])).toMatchObject({ probes: 20, failures: 1, stalls: 2, p99Ms: 3500, nodes: ['a'] });
  });
  it('accumulates windows since a verdict: counts add, the worst p99 stays', () => {
    let e: TargetEvidence = EMPTY_EVIDENCE;
    e = accumulate(e, w('a', [r(0, 0, 150, 3)]));
    e = accumulate(e, w('b', [r(0, 0, 150, 2.5)]));
    expect(e).toEqual({ probes: 300, failures: 0, stalls: 0, notRun: 0, p99Ms: 3, nodes: [], windows: 2, full: true });
  });
});

describe('isStale', () => {
  const f = { windowSeconds: 300, now: Date.parse('2026-11-29T08:00:00Z'), current: (v: string) => v === '7' };
  it.each([
    ['current plan, window ended 1 min ago', '7', '2026-11-29T07:59:00Z', false],
    ['current plan, ended exactly two windows ago', '7', '2026-11-29T07:50:00Z', false],
    ['current plan, ended more than two windows ago', '7', '2026-11-29T07:49:59Z', true],
    ['another plan', '6', '2026-11-29T07:59:00Z', true],
    ['a window end that is no time', '7', 'soon', true],
    ['a window that ends two windows from now (a clock ahead)', '7', '2026-11-29T08:10:00Z', false],
    ['a window that ends more than two windows from now', '7', '2026-11-29T08:10:01Z', true],
  ])('%s', (_what, planVersion, end, stale) => {
    expect(isStale({ planVersion, window: { start: end, end, seconds: 300 } }, 'x', f)).toBe(stale);
  });
});

const failing: TargetEvidence = { probes: 40, failures: 12, stalls: 0, notRun: 0, p99Ms: 4200, nodes: ['node-1', 'node-3'], windows: 2, full: true };
const clean: TargetEvidence = { probes: 300, failures: 0, stalls: 0, notRun: 0, p99Ms: 3, nodes: [], windows: 10, full: true };
const partial: TargetEvidence = { ...failing, full: false };

describe('judge and the line it renders', () => {
  it.each<[string, Verdict, boolean | 'planFull', TargetEvidence | undefined, { evidence: TargetEvidence; label: string } | undefined, string, string]>([
    ['at risk, failing', 'AtRisk', true, failing, undefined, 'measured', 'measured: 12/40 failed from node-1, node-3; p99 4.2 s'],
    ['at risk, clean over a full window: not observed', 'AtRisk', true, clean, undefined, 'notObserved', 'not observed: measured 0/300 failed; p99 3 ms, nothing failed or stalled over a full window'],
    ['at risk, clean but not a full window yet', 'AtRisk', true, { ...clean, full: false }, undefined, 'measured', 'measured: 0/300 failed; p99 3 ms (no full window yet)'],
    ['mitigated, failing over a full window: contradiction', 'Mitigated', true, failing, undefined, 'contradiction', 'contradicts Mitigated: measured 12/40 failed from node-1, node-3; p99 4.2 s'],
    ['not applicable, stalls only: contradiction', 'NotApplicable', true, { ...clean, stalls: 3, nodes: ['n'] }, undefined, 'contradiction', 'contradicts NotApplicable: measured 0/300 failed, 3 stalled from n; p99 3 ms'],
    ['mitigated, failing in a partial window: no contradiction yet', 'Mitigated', true, partial, undefined, 'measured', 'measured: 12/40 failed from node-1, node-3; p99 4.2 s (no full window yet)'],
    ['mitigated, since Enforce', 'Mitigated', true, clean, { evidence: clean, label: 'Enforce' }, 'measured', 'measured since Enforce: 0/300 failed; p99 3 ms'],
    ['mitigated, nothing since yet: the latest windows', 'Mitigated', true, clean, { evidence: EMPTY_EVIDENCE, label: 'Enforce' }, 'measured', 'measured: 0/300 failed; p99 3 ms'],
    ['no report yet', 'AtRisk', true, undefined, undefined, 'none', 'measured: no probe report for this target yet'],
    ['not in the plan', 'AtRisk', false, failing, undefined, 'notProbed', 'not probed: no private IPv4 VIP with a TCP port or an Ingress host'],
    ['left out of a full plan: said so, not taken for a target without a VIP', 'AtRisk', 'planFull', undefined, undefined, 'planFull', "not probed: the probe plan is full (3000 entries, shared between namespaces in turn; see the operator's log)"],
    ['pending: figures only', 'Pending', true, failing, undefined, 'measured', 'measured: 12/40 failed from node-1, node-3; p99 4.2 s'],
  ])('%s', (_what, verdict, probed, latest, since, kind, line) => {
    const j = judge(verdict, probed, latest, since);
    expect(j.kind).toBe(kind);
    expect(renderJudgement(j)).toBe(line);
  });

  it('a contradiction says what was measured since Enforce too', () => {
    expect(renderJudgement(judge('Mitigated', true, failing, { evidence: { ...failing, probes: 80, failures: 20 }, label: 'Enforce' }))).toBe(
      'contradicts Mitigated: measured 12/40 failed from node-1, node-3; p99 4.2 s; measured since Enforce: 20/80 failed from node-1, node-3; p99 4.2 s',
    );
  });

  it.each([
    [0.42, '0.4 ms'],
    [3.08, '3 ms'],
    [999.4, '999 ms'],
    [4490, '4.5 s'],
  ])('formats %p ms as %p', (ms, text) => expect(formatLatency(ms)).toBe(text));

  it('names at most five nodes', () => {
    expect(renderJudgement(judge('AtRisk', true, { ...failing, nodes: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] }))).toBe('measured: 12/40 failed from a, b, c, d, e and 2 more; p99 4.2 s');
  });
});

describe('measuredCondition', () => {
  const j = (who: string, verdict: Verdict, latest: TargetEvidence | undefined, probed = true) => ({ who, judgement: judge(verdict, probed, latest) });
  it('True when a Mitigated or NotApplicable target fails over a full window, naming it, its nodes and figures', () => {
    expect(measuredCondition([j('Service/shop/cart', 'Mitigated', failing), j('Service/shop/ok', 'Mitigated', clean), j('Ingress/shop/web', 'AtRisk', failing)])).toEqual({
      status: 'True',
      reason: 'LoopbackMeasured',
      message: 'measured failures or stalls where loopguard finds no loopback: Service/shop/cart (Mitigated): 12/40 failed from node-1, node-3; p99 4.2 s',
    });
  });
  it('more than three: counted', () => {
    const c = measuredCondition(['a', 'b', 'c', 'd', 'e'].map((n) => j(n, 'NotApplicable', failing)));
    expect(c?.message).toMatch(/; c \(NotApplicable\): .* \(and 2 more\)$/);
  });
  it('False when measurements agree, or nothing full was measured yet; absent when nothing is probed', () => {
    expect(measuredCondition([j('a', 'Mitigated', clean), j('b', 'AtRisk', failing)])).toEqual({ status: 'False', reason: 'MeasuredAsModelled', message: '2 of 2 probed target(s) measured over a full window; none that loopguard calls Mitigated or NotApplicable failed or stalled' });
    expect(measuredCondition([j('a', 'Mitigated', partial), j('b', 'AtRisk', undefined)])?.reason).toBe('NotMeasuredYet');
    expect(measuredCondition([j('a', 'Mitigated', failing, false)])).toBeUndefined();
    expect(measuredCondition([])).toBeUndefined();
  });
});
