import { describe, expect, it } from '@jest/globals';
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { annotationsSetBy, lostRecordDueAt, lostRecordError, lostRecordEvidence, RECORD_LAG_MS, type LostRecordInput } from '../../../src/model/lost-record.js';
import { serviceFacts } from '../../../src/model/target-facts.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const AUTO = 'ingress.cloud.tencent.com/tke-service-config-auto';
const T = '2026-11-25T12:00:00Z';
const LATER = new Date(Date.parse(T) + RECORD_LAG_MS);

const entry = (manager: string, keys: string[], time = T): V1ManagedFieldsEntry => ({
  manager,
  operation: 'Update',
  apiVersion: 'v1',
  time: new Date(time),
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:metadata': { 'f:annotations': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) } },
});

describe('annotationsSetBy: what loopguard wrote, from managedFields', () => {
  it("keeps only the manager's annotation keys, with when", () => {
    const entries = [entry('kubectl-client-side-apply', ['team']), entry('loopguard', [PREVENT]), { manager: 'loopguard', operation: 'Update', fieldsV1: { 'f:spec': {} } }];
    expect(annotationsSetBy('loopguard', entries)).toEqual({ [PREVENT]: new Date(T).toISOString() });
    expect(annotationsSetBy('loopguard', [entry('kubectl', [PREVENT])])).toBeUndefined();
    expect(annotationsSetBy('loopguard', undefined)).toBeUndefined();
  });

  it('reaches the Service facts', () => {
    const facts = serviceFacts({ metadata: { name: 'web', namespace: 'shop', annotations: { [PREVENT]: 'true' }, managedFields: [entry('loopguard', [PREVENT])] }, spec: { type: 'LoadBalancer' } });
    expect(facts.setByLoopguard).toEqual({ [PREVENT]: new Date(T).toISOString() });
  });
});

describe('lostRecordEvidence: a target loopguard changed whose record is gone', () => {
  const base: LostRecordInput = { kind: 'Service', namespace: 'shop', name: 'web', annotations: { [PREVENT]: 'true' }, setByLoopguard: { [PREVENT]: T }, hasRecord: false, now: LATER };
  const cases: { name: string; over: Partial<LostRecordInput>; lost: string[] }[] = [
    { name: "loopguard's prevent-loopback, no record: lost", over: {}, lost: [PREVENT] },
    { name: 'a record exists (any policy\'s): not lost', over: { hasRecord: true }, lost: [] },
    { name: 'the annotation is the user\'s (another field manager): no evidence', over: { setByLoopguard: { team: T } }, lost: [] },
    { name: 'loopguard restored an original "false": nothing of loopguard\'s is left', over: { annotations: { [PREVENT]: 'false' } }, lost: [] },
    { name: 'written just now: the record informer may lag, not lost yet', over: { now: new Date(Date.parse(T) + 5_000) }, lost: [] },
    { name: "an Ingress's auto annotation loopguard added", over: { kind: 'Ingress', annotations: { [AUTO]: 'true' }, setByLoopguard: { [AUTO]: T } }, lost: [AUTO] },
  ];
  it.each(cases)('$name', ({ over, lost }) => {
    expect(lostRecordEvidence({ ...base, ...over })).toEqual(lost);
  });

  it('a record missing within the lag is due when the lag runs out (the round comes back then), never after', () => {
    const soon = new Date(Date.parse(T) + 5_000);
    expect(lostRecordDueAt({ ...base, now: soon })).toBe(Date.parse(T) + RECORD_LAG_MS);
    expect(lostRecordDueAt({ ...base, now: LATER })).toBeUndefined(); // already lost: the verdict is given now
    expect(lostRecordDueAt({ ...base, now: soon, hasRecord: true })).toBeUndefined();
    expect(lostRecordDueAt({ ...base, now: soon, setByLoopguard: { team: T } })).toBeUndefined();
  });

  it('the verdict is Stalled RecordLost and names the fix', () => {
    const error = lostRecordError(base);
    expect(error).toMatchObject({ reason: 'RecordLost', permanent: true });
    expect(error?.message).toMatch(/LoopbackRecord is missing/);
    expect(error?.message).toContain(`kubectl annotate service web -n shop ${PREVENT}-`);
    expect(lostRecordError({ ...base, hasRecord: true })).toBeUndefined();
  });
});

describe('planTarget: a lost record is reported, never taken for "nothing to restore"', () => {
  it('a converged Service loopguard annotated, with no record: the plan carries the RecordLost verdict', async () => {
    const { assessTarget } = await import('../../../src/model/assessment.js');
    const { planTarget } = await import('../../../src/plan/policy-plan.js');
    const { clb, context, l4Listener, service } = await import('./fixtures.js');
    const svc = service({ externalTrafficPolicy: 'Local' }, { [PREVENT]: 'true' });
    const a = assessTarget(svc, context({ clb: clb({ listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] }) }));
    expect(a.verdict).toBe('Mitigated');
    const input = { owner: 'shop/p', rejected: { keepalive: false, range100_64: false }, now: LATER, graceMs: 10_000 };
    const lost = planTarget(input, { assessment: a, annotations: svc.annotations, setByLoopguard: { [PREVENT]: T } });
    expect(lost.steps).toEqual([]);
    expect(lost.error?.reason).toBe('RecordLost');
    // The user's own annotation (no loopguard entry in managedFields): nothing to report.
    expect(planTarget(input, { assessment: a, annotations: svc.annotations }).error).toBeUndefined();
  });
});
