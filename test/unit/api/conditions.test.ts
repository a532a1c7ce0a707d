import { describe, expect, it } from '@jest/globals';
import {
  findCondition,
  isConditionTrue,
  removeStatusCondition,
  setStatusCondition,
  toMetaTime,
  type Condition,
} from '../../../src/api/conditions.js';

const t0 = new Date('2025-05-01T10:00:00.123Z');
const t1 = new Date('2025-05-01T10:05:00.999Z');
const ready: Condition = { type: 'Ready', status: 'False', reason: 'Progressing', message: 'working', lastTransitionTime: '2025-05-01T09:00:00Z', observedGeneration: 1 };

describe('toMetaTime', () => {
  it('drops milliseconds like metav1.Time', () => {
    expect(toMetaTime(t0)).toBe('2025-05-01T10:00:00Z');
  });
});

describe('setStatusCondition', () => {
  it('appends a new condition with now as lastTransitionTime', () => {
    const { conditions, changed } = setStatusCondition(undefined, { type: 'Ready', status: 'Unknown', reason: 'Initializing', message: '' }, t0);
    expect(changed).toBe(true);
    expect(conditions).toEqual([{ type: 'Ready', status: 'Unknown', reason: 'Initializing', message: '', lastTransitionTime: '2025-05-01T10:00:00Z' }]);
  });

  it('keeps a given lastTransitionTime for a new condition', () => {
    const { conditions } = setStatusCondition([], { type: 'Ready', status: 'True', reason: 'R', message: '', lastTransitionTime: '2020-01-01T00:00:00Z' }, t0);
    expect(conditions[0]?.lastTransitionTime).toBe('2020-01-01T00:00:00Z');
  });

  it('moves lastTransitionTime only when the status changes', () => {
    const sameStatus = setStatusCondition([ready], { type: 'Ready', status: 'False', reason: 'Stalled', message: 'other', observedGeneration: 2 }, t1);
    expect(sameStatus.changed).toBe(true);
    expect(sameStatus.conditions[0]).toEqual({ ...ready, reason: 'Stalled', message: 'other', observedGeneration: 2 });

    const flipped = setStatusCondition([ready], { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'ok', observedGeneration: 1 }, t1);
    expect(flipped.conditions[0]?.lastTransitionTime).toBe('2025-05-01T10:05:00Z');
    expect(flipped.conditions[0]?.status).toBe('True');
  });

  it('uses the new condition’s lastTransitionTime on a status change when given', () => {
    const r = setStatusCondition([ready], { type: 'Ready', status: 'True', reason: 'R', message: '', lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 1 }, t1);
    expect(r.conditions[0]?.lastTransitionTime).toBe('2030-01-01T00:00:00Z');
  });

  it('reports no change for an identical condition and does not touch the time', () => {
    const r = setStatusCondition([ready], { type: 'Ready', status: 'False', reason: 'Progressing', message: 'working', observedGeneration: 1 }, t1);
    expect(r.changed).toBe(false);
    expect(r.conditions).toEqual([ready]);
  });

  it('clears observedGeneration when the new condition has none', () => {
    const r = setStatusCondition([ready], { type: 'Ready', status: 'False', reason: 'Progressing', message: 'working' }, t1);
    expect(r.changed).toBe(true);
    expect(r.conditions[0]).not.toHaveProperty('observedGeneration');
  });

  it('never mutates its input and keeps other conditions in place', () => {
    const stalled: Condition = { type: 'Stalled', status: 'True', reason: 'PermissionDenied', message: 'm', lastTransitionTime: '2025-05-01T09:00:00Z' };
    const input = [stalled, ready];
    const copy = JSON.parse(JSON.stringify(input)) as Condition[];
    const r = setStatusCondition(input, { type: 'Ready', status: 'True', reason: 'Reconciled', message: '' }, t1);
    expect(input).toEqual(copy);
    expect(r.conditions.map((c) => c.type)).toEqual(['Stalled', 'Ready']);
  });
});

describe('removeStatusCondition / findCondition', () => {
  it('removes by type and reports whether it was there', () => {
    expect(removeStatusCondition([ready], 'Ready')).toEqual({ conditions: [], changed: true });
    expect(removeStatusCondition([ready], 'Stalled')).toEqual({ conditions: [ready], changed: false });
    expect(removeStatusCondition(undefined, 'Stalled')).toEqual({ conditions: [], changed: false });
  });
  it('finds conditions', () => {
    expect(findCondition([ready], 'Ready')).toEqual(ready);
    expect(findCondition([ready], 'Stalled')).toBeUndefined();
    expect(findCondition(undefined, 'Ready')).toBeUndefined();
    expect(isConditionTrue([ready], 'Ready')).toBe(false);
    expect(isConditionTrue([{ ...ready, status: 'True' }], 'Ready')).toBe(true);
  });
});
