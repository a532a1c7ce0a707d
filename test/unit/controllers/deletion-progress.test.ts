import { describe, expect, it } from '@jest/globals';
import { deletionProgress } from '../../../src/model/deletion-status.js';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import type { ReleaseOutcome } from '../../../src/model/status.js';

const record = (kind: 'Service' | 'Ingress', name: string, corrupt = false): LoopbackRecord => ({
  metadata: { name: `${kind.toLowerCase()}.shop.${name}` },
  spec: { target: { kind, namespace: 'shop', name }, policy: { namespace: 'shop', name: 'p' }, originals: corrupt ? ({ v: 1, listeners: { l: { sourceIpType: 7 } } } as never) : { v: 1 } },
});
const transient = { reason: 'RetryingAfterError' as const, message: 'throttled', permanent: false };
const permanent = { reason: 'PermissionDenied' as const, message: 'grant clb:ModifyListener', permanent: true };
const wait: ReleaseOutcome = { kind: 'Service', namespace: 'shop', name: 'web', plan: ['wait for kube-proxy to release the VIP'], waiting: 'waiting 8 s for kube-proxy to release the VIP' };

describe('deletionProgress: where the revert stands after its round', () => {
  it.each<[string, LoopbackRecord[], ReleaseOutcome[], boolean, { blocked: string[]; pending: string[]; onlyTkeWaits: boolean }]>([
    ['every release done: nothing left', [record('Service', 'web')], [], true, { blocked: [], pending: [], onlyTkeWaits: false }],
    ['a wait for TKE only: pending, and the round comes back when it ends', [record('Service', 'web')], [wait], true, { blocked: [], pending: ['Service web: waiting 8 s for kube-proxy to release the VIP'], onlyTkeWaits: true }],
    ['a transient error beside a wait: pending, on the backoff', [], [wait, { kind: 'Service', namespace: 'shop', name: 'api', plan: [], error: transient }], true, { blocked: [], pending: ['Service web: waiting 8 s for kube-proxy to release the VIP', 'Service api: RetryingAfterError: throttled'], onlyTkeWaits: false }],
    ['steps left, no error (a wait the executor did not note): the first step named, and the round comes back when the first wait ends', [], [{ kind: 'Ingress', namespace: 'shop', name: 'front', plan: ['restore the TkeServiceConfig'] }], true, { blocked: [], pending: ['Ingress front: restore the TkeServiceConfig'], onlyTkeWaits: true }],
    ['a permanent error blocks, naming the target', [], [{ kind: 'Service', namespace: 'shop', name: 'web', plan: ['x'], error: permanent }], true, { blocked: ['Service shop/web: PermissionDenied: grant clb:ModifyListener'], pending: [], onlyTkeWaits: false }],
    ['a corrupt record blocks with the way to finish by hand', [record('Service', 'web', true)], [], true, { blocked: ['Service shop/web: its LoopbackRecord service.shop.web is invalid'], pending: [], onlyTkeWaits: false }],
    ['an Ingress before the TkeServiceConfig cache syncs: pending, never released on a guess', [record('Ingress', 'front'), record('Service', 'web')], [], false, { blocked: [], pending: ['Ingress front: waiting for the TkeServiceConfig cache to sync'], onlyTkeWaits: false }],
  ])('%s', (_, records, releases, configsKnown, want) => {
    const got = deletionProgress(records, releases, configsKnown);
    expect(got.blocked.map((b) => `${b.kind} ${b.namespace}/${b.name}: ${b.why}`.slice(0, want.blocked[0]?.length ?? 0))).toEqual(want.blocked);
    expect(got.pending).toEqual(want.pending);
    expect(got.onlyTkeWaits).toBe(want.onlyTkeWaits);
  });
});
