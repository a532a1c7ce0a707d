// Where a write's proof goes, and when a listener read proves it (src/cloud/proof.ts, issue 40 #1).
import { describe, expect, it } from '@jest/globals';
import type { ActionLoad, ProofContext, Visibility, VisibilityState } from '../../src/cloud/proof.js';
import { chooseProof, CONFIRMATIONS, INITIAL_VISIBILITY, needsConfirmation, onConfirmation, room, shows } from '../../src/cloud/proof.js';

const load = (rate: number, waiting = 0, running = 0): ActionLoad => ({ rate, waiting, running });
const ctx = (over: Partial<ProofContext> = {}): ProofContext => ({ readable: true, lastReadMissed: false, visibility: 'unknown', ...over });

describe('chooseProof', () => {
  it.each<[string, ActionLoad, ActionLoad, ProofContext, string]>([
    ['a lone client, both idle at their budgets: the task (a tie goes to the proof right in every world)', load(10), load(10), ctx(), 'DescribeTaskStatus'],
    ['polls cut by refusals, reads at their budget: a read', load(5), load(10), ctx(), 'DescribeListeners'],
    ['polls backed up (a second of them queued at 10/s), reads free: a read', load(10, 8, 2), load(10), ctx(), 'DescribeListeners'],
    ['a few polls queued (8 at 10/s), reads free: still the task (loopguard cannot see TKE\'s reads)', load(10, 6, 2), load(10), ctx(), 'DescribeTaskStatus'],
    ['polls with room, but the account cut them below the reads: a read', load(9.5), load(10), ctx(), 'DescribeListeners'],
    ['reads backed up by a discovery (40 queued), polls free: the task', load(10), load(10, 30, 10), ctx(), 'DescribeTaskStatus'],
    ['both backed up: the shorter backlog (reads)', load(10, 20), load(10, 12), ctx(), 'DescribeListeners'],
    ['an attribute write (no listener shows it): the task, whatever the room', load(1, 50), load(10), ctx({ readable: false }), 'DescribeTaskStatus'],
    ['the last read did not show the write: the task (only it tells a failed task from a running one)', load(1, 50), load(10), ctx({ lastReadMissed: true }), 'DescribeTaskStatus'],
    ['an early world (a value showed before its task ended): the task, always', load(1, 50), load(10), ctx({ visibility: 'early' }), 'DescribeTaskStatus'],
    ['a world of visibility at completion, reads roomier: a read', load(2), load(3), ctx({ visibility: 'atCompletion' }), 'DescribeListeners'],
  ])('%s', (_name, dts, dl, c, want) => {
    expect(chooseProof({ DescribeTaskStatus: dts, DescribeListeners: dl }, c)).toBe(want);
  });

  it('room is the rate less what is queued or in flight', () => {
    expect([room(load(10)), room(load(10, 3, 2)), room(load(0.5, 4, 1))]).toEqual([10, 5, -4.5]);
  });
});

describe('when a listener read proves a write', () => {
  /** Feeds the DescribeTaskStatus answers of confirmations (each after a read that showed the write). */
  const replay = (statuses: number[]): Array<[Visibility, number, boolean]> => {
    let s: VisibilityState = INITIAL_VISIBILITY;
    return statuses.map((st) => {
      s = onConfirmation(s, st);
      return [s.visibility, s.confirmed, needsConfirmation(s)];
    });
  };

  it('starts unknown: a read that shows the write needs the task confirmed', () => {
    expect(INITIAL_VISIBILITY).toEqual({ visibility: 'unknown', confirmed: 0 });
    expect(needsConfirmation(INITIAL_VISIBILITY)).toBe(true);
    expect(CONFIRMATIONS).toBe(5);
  });

  it.each<[string, number[], Array<[Visibility, number, boolean]>]>([
    // The emulator's world: a value shows only once its task has succeeded, so every confirmation answers 0.
    ['at completion: five confirmations, then reads prove on their own', [0, 0, 0, 0, 0, 0], [['unknown', 1, true], ['unknown', 2, true], ['unknown', 3, true], ['unknown', 4, true], ['atCompletion', 5, false], ['atCompletion', 6, false]]],
    // The other reading: the value shows while the task runs. The confirmation says so, and reads never prove again.
    ['early: the first confirmation still running settles it for good', [2, 0, 0, 0, 0, 0], [['early', 0, true], ['early', 0, true], ['early', 0, true], ['early', 0, true], ['early', 0, true], ['early', 0, true]]],
    ['early, found late: four at completion, then one still running', [0, 0, 0, 0, 2, 0], [['unknown', 1, true], ['unknown', 2, true], ['unknown', 3, true], ['unknown', 4, true], ['early', 4, true], ['early', 4, true]]],
    ['a task that failed after its value showed is early too', [0, 1], [['unknown', 1, true], ['early', 1, true]]],
    ['an unknown status confirms nothing', [7, 0], [['unknown', 0, true], ['unknown', 1, true]]],
  ])('%s', (_name, statuses, want) => {
    expect(replay(statuses)).toEqual(want);
  });
});

describe('shows', () => {
  const written = { HealthSwitch: 1, SourceIpType: 1, TimeOut: 2, IntervalTime: 5, CheckType: 'TCP' };
  it.each<[string, Record<string, unknown> | undefined, boolean]>([
    ['every written field as written', { ...written }, true],
    ['and fields the write did not carry (HTTP-only ones a read returns)', { ...written, HttpCheckPath: '/' }, true],
    ['the old source', { ...written, SourceIpType: 0 }, false],
    ['a field the read leaves out', { HealthSwitch: 1, SourceIpType: 1, TimeOut: 2, CheckType: 'TCP' }, false],
    ['no health check at all', undefined, false],
  ])('%s', (_name, read, want) => {
    expect(shows(read, written)).toBe(want);
  });
});
