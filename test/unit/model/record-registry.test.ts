// The ownership registry's rules (src/model/record-registry.ts): owner keys, object identity, reading a record and
// what a write starts from. RecordStore (src/kube/record-store.ts) only carries these out on the API server.
import { describe, expect, it } from '@jest/globals';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import type { Originals } from '../../../src/api/originals.js';
import {
  holderOf,
  madeFor,
  ownerKey,
  ownerOf,
  problemOf,
  readRecord,
  recordFor,
  writeBasis,
  type WriteBasis,
} from '../../../src/model/record-registry.js';

const ORIGINALS: Originals = { v: 1, annotations: { 'service.cloud.tencent.com/prevent-loopback': null } };
const TEAM = ownerKey('team', 'guard');
const OTHER = ownerKey('team', 'other');

function record(opts: { uid?: string; policy?: string; originals?: unknown } = {}): LoopbackRecord {
  const [namespace = '', name = ''] = (opts.policy ?? TEAM).split('/');
  return {
    metadata: { name: 'service.team.web', resourceVersion: '7' },
    spec: {
      target: { kind: 'Service', namespace: 'team', name: 'web', ...(opts.uid ? { uid: opts.uid } : {}) },
      policy: { namespace, name },
      originals: (opts.originals ?? ORIGINALS) as Originals,
    },
  };
}

describe('owner keys', () => {
  it('are <namespace>/<name> of the policy, read back from a record', () => {
    expect(TEAM).toBe('team/guard');
    expect(ownerOf(record().spec.policy)).toBe(TEAM);
    expect(holderOf(record({ policy: OTHER }))).toBe(OTHER);
    expect(holderOf(undefined)).toBeUndefined();
    expect(holderOf(record())).toBe(TEAM);
  });

  it('round-trip through the record a write makes', () => {
    const written = recordFor({ kind: 'Service', namespace: 'team', name: 'web', uid: 'u-1' }, TEAM, ORIGINALS);
    expect(ownerOf(written.spec.policy)).toBe(TEAM);
    expect(written).toEqual({
      apiVersion: 'loopguard.dev/v1alpha1',
      kind: 'LoopbackRecord',
      metadata: { name: 'service.team.web', labels: { 'loopguard.dev/target-namespace': 'team' } },
      spec: { target: { kind: 'Service', namespace: 'team', name: 'web', uid: 'u-1' }, policy: { namespace: 'team', name: 'guard' }, originals: ORIGINALS },
    });
    // A replacement carries the resourceVersion it read; an object without a uid writes none.
    const replaced = recordFor({ kind: 'Ingress', namespace: 'team', name: 'front' }, TEAM, ORIGINALS, '42');
    expect(replaced.metadata).toEqual({ name: 'ingress.team.front', labels: { 'loopguard.dev/target-namespace': 'team' }, resourceVersion: '42' });
    expect(replaced.spec.target).toEqual({ kind: 'Ingress', namespace: 'team', name: 'front' });
  });
});

describe('identity: a record belongs to the very object it was made for', () => {
  it.each<[string | undefined, string | undefined, boolean]>([
    ['u-1', 'u-1', true],
    // An earlier object of the same name, deleted and re-created.
    ['u-1', 'u-2', false],
    // A record written without a uid, or an object read without one: taken as its.
    [undefined, 'u-2', true],
    ['u-1', undefined, true],
    [undefined, undefined, true],
  ])('record uid %s, object uid %s → %s', (recorded, live, expected) => {
    expect(madeFor(record({ ...(recorded ? { uid: recorded } : {}) }), { ...(live ? { uid: live } : {}) })).toBe(expected);
  });

  it("reads another object's record as no record, and the object's own as its originals and owner", () => {
    expect(readRecord(record({ uid: 'u-1' }), { uid: 'u-2' })).toEqual({});
    expect(readRecord(record({ uid: 'u-1' }), { uid: 'u-1' })).toEqual({ originals: ORIGINALS, owner: TEAM });
    // Without an object (an orphan, whose staleness the caller judged), the record as it is.
    expect(readRecord(record({ uid: 'u-1' }))).toEqual({ originals: ORIGINALS, owner: TEAM });
    expect(readRecord(undefined, { uid: 'u-1' })).toEqual({});
  });

  it('never returns invalid originals: the problem names the record and what is wrong', () => {
    const bad = record({ originals: { v: 1, listeners: { 'lbl-1': { sourceIpType: 7 } } } });
    expect(problemOf(bad)).toBe('listeners["lbl-1"].sourceIpType must be 0 or 1');
    expect(readRecord(bad)).toEqual({ owner: TEAM, problem: 'LoopbackRecord service.team.web: listeners["lbl-1"].sourceIpType must be 0 or 1' });
    expect(problemOf(record())).toBeUndefined();
  });
});

describe('writeBasis: what a write to the stored record starts from', () => {
  const invalid = record({ uid: 'u-1', originals: { v: 2 } });
  it.each<[string, LoopbackRecord | undefined, string | undefined, string, boolean, WriteBasis]>([
    ['no record: a first write', undefined, 'u-1', TEAM, false, { kind: 'write', originals: undefined }],
    ["the policy's own record", record({ uid: 'u-1' }), 'u-1', TEAM, false, { kind: 'write', originals: ORIGINALS }],
    ["another policy's record, release", record({ uid: 'u-1', policy: OTHER }), 'u-1', TEAM, false, { kind: 'leave', holder: OTHER }],
    ["another policy's record, take-over", record({ uid: 'u-1', policy: OTHER }), 'u-1', TEAM, true, { kind: 'write', originals: ORIGINALS }],
    ["an earlier object's record counts as none, whoever holds it", record({ uid: 'u-0', policy: OTHER }), 'u-1', TEAM, false, { kind: 'write', originals: undefined }],
    ['an invalid record is refused, even on take-over', invalid, 'u-1', TEAM, true, { kind: 'refuse', problem: 'unsupported record version (expected "v": 1)' }],
    ["an earlier object's invalid record is replaced", invalid, 'u-2', TEAM, false, { kind: 'write', originals: undefined }],
  ])('%s', (_name, current, uid, owner, takeOver, expected) => {
    expect(writeBasis(current, { ...(uid ? { uid } : {}) }, owner, takeOver)).toEqual(expected);
  });
});
