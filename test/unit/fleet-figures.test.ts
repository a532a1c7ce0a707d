import { describe, expect, it } from '@jest/globals';
import { answeredByAction, busiestAction, callerCounts, fleetLine, fraction, percentile, sumCounts, tMin, countsByAction, demandTimeline, rleTimeline, type TimelinePoint } from '../../bench/fleet-figures.js';

const stats = {
  byCaller: {
    'loopguard-1': { ModifyListener: { OK: 40, RequestLimitExceeded: 2 }, DescribeTaskStatus: { OK: 58 } },
    'loopguard-2': { ModifyListener: { OK: 40, 'RequestLimitExceeded.UinLimitExceeded': 1 }, DescribeListeners: { 'InvalidParameter.LBIdNotFound': 1, OK: 8 } },
    'tke-1': { DescribeListeners: { OK: 10 } },
  },
};

describe('bench:fleet figures', () => {
  it('counts every call of a caller and its RequestLimitExceeded answers, sub-codes included', () => {
    expect(callerCounts(stats, 'loopguard-1')).toEqual({ calls: 100, rle: 2 });
    expect(callerCounts(stats, 'loopguard-2')).toEqual({ calls: 50, rle: 1 });
    expect(callerCounts(stats, 'nobody')).toEqual({ calls: 0, rle: 0 });
    const lg = sumCounts([callerCounts(stats, 'loopguard-1'), callerCounts(stats, 'loopguard-2')]);
    expect(lg).toEqual({ calls: 150, rle: 3 });
    expect(fraction(lg)).toBe(0.02);
    expect(fraction({ calls: 0, rle: 0 })).toBe(0);
  });

  it('T_min is one ModifyListener per listener at the quota; the line says how close the fleet came', () => {
    expect(tMin(360)).toBe(18);
    const line = fleetLine({ clusters: 3, listeners: 360, tActual: 20, loopguards: { calls: 1000, rle: 10 }, tke: { calls: 200, rle: 0 }, converged: true, floor: { action: 'DescribeTaskStatus', seconds: 19 } });
    expect(line).toBe('fleet: clusters=3 listeners=360 quota=20 write_ratio=0.900 rle_fraction=0.0100 tke_rle_fraction=0.0000 converged=true floor_action=DescribeTaskStatus floor_ratio=0.950');
    const stuck = fleetLine({ clusters: 2, listeners: 40, tActual: NaN, loopguards: { calls: 0, rle: 0 }, tke: { calls: 0, rle: 0 }, converged: false, floor: { action: '', seconds: 0 } });
    expect(stuck).toContain('write_ratio=0.000');
    expect(stuck).toContain('floor_action=none floor_ratio=0.000');
  });

  it('percentile by nearest rank', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 99)).toBe(5);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe("the quota's floor: the busiest action's answered calls at the quota", () => {
  const stats = {
    byCaller: {
      'loopguard-1': { ModifyListener: { OK: 120, 'RequestLimitExceeded.UinLimitExceeded': 3 }, DescribeTaskStatus: { OK: 240 } },
      'tke-1': { DescribeTaskStatus: { OK: 20, RequestLimitExceeded: 5 }, DescribeListeners: { OK: 100 } },
      other: { DescribeTaskStatus: { OK: 1000 } },
    },
  } as never;

  it('counts answered calls per action over the given callers only; throttled answers are not counted', () => {
    expect(answeredByAction(stats, ['loopguard-1', 'tke-1'])).toEqual({ ModifyListener: 120, DescribeTaskStatus: 260, DescribeListeners: 100 });
    expect(answeredByAction(stats, ['nobody'])).toEqual({});
  });

  it('the floor is the busiest action at the quota, which can exceed T_min (ModifyListener only)', () => {
    const floor = busiestAction(answeredByAction(stats, ['loopguard-1', 'tke-1']));
    expect(floor).toEqual({ action: 'DescribeTaskStatus', calls: 260, seconds: 13 });
    expect(floor.seconds).toBeGreaterThan(tMin(120));
    expect(busiestAction({})).toEqual({ action: '', calls: 0, seconds: 0 });
  });
});

describe('rleTimeline', () => {
  it('lists the seconds with throttled calls, by action, from cumulative snapshots', () => {
    const stats = { byCaller: { a: { DescribeListeners: { ok: 9, RequestLimitExceeded: 2 } }, b: { DescribeTaskStatus: { 'RequestLimitExceeded.UinLimitExceeded': 1 } }, c: { DescribeListeners: { RequestLimitExceeded: 5 } } } };
    expect(countsByAction(stats, ['a', 'b'])).toEqual({ DescribeListeners: { calls: 11, rle: 2 }, DescribeTaskStatus: { calls: 1, rle: 1 } });
    const c = (calls: number, rle: number) => ({ calls, rle });
    expect(
      rleTimeline([
        { at: 0, counts: {} },
        { at: 1, counts: { DescribeListeners: c(5, 0) } },
        { at: 2, counts: { DescribeListeners: c(9, 2), DescribeTaskStatus: c(1, 1) } },
        { at: 3, counts: { DescribeListeners: c(12, 2), DescribeTaskStatus: c(1, 1) } },
        { at: 4.2, counts: { DescribeListeners: c(20, 5), DescribeTaskStatus: c(1, 1) } },
      ]),
    ).toEqual(['t+2s 3 (DL 2, DTS 1)', 't+4s 3 (DL 3)']);
  });
});

describe('demandTimeline', () => {
  const c = (calls: number, rle: number) => ({ calls, rle });
  it('names who asked for a throttled action in each throttled second, and counts the seconds TKE alone asked more than the quota', () => {
    const lg: TimelinePoint[] = [
      { at: 0, counts: {} },
      { at: 1, counts: { DescribeListeners: c(5, 0) } },
      { at: 2, counts: { DescribeListeners: c(14, 3) } },
      { at: 3, counts: { DescribeListeners: c(20, 3), ModifyListener: c(4, 0) } },
    ];
    const tke: TimelinePoint[] = [
      { at: 0, counts: {} },
      { at: 1, counts: { DescribeListeners: c(10, 0) } },
      { at: 2, counts: { DescribeListeners: c(35, 6), DescribeTaskStatus: c(22, 2) } },
      { at: 3, counts: { DescribeListeners: c(40, 7), DescribeTaskStatus: c(22, 2) } },
    ];
    expect(demandTimeline(lg, tke)).toEqual({
      // t+2s: TKE alone over the quota of two actions, one second.
      lines: ['t+2s DL 34 asked (loopguards 9, TKE 25), DTS 22 asked (loopguards 0, TKE 22)', 't+3s DL 11 asked (loopguards 6, TKE 5)'],
      tkeOverQuota: { seconds: 1, tkeRle: 8 },
    });
  });
  it('prints nothing when nobody was throttled', () => {
    expect(demandTimeline([{ at: 0, counts: {} }, { at: 1, counts: { ModifyListener: c(19, 0) } }], [{ at: 0, counts: {} }, { at: 1, counts: {} }])).toEqual({ lines: [], tkeOverQuota: { seconds: 0, tkeRle: 0 } });
  });
});
