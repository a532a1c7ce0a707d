import { describe, expect, it } from '@jest/globals';
import { API_VERSION, KIND, type LoopbackPolicy } from '../../../src/api/loopbackpolicy.js';
import { deletionBlockedStatus } from '../../../src/controllers/policy/deletion.js';

const NOW = new Date('2026-11-22T10:00:00Z');
const policy: LoopbackPolicy = {
  apiVersion: API_VERSION,
  kind: KIND,
  metadata: { namespace: 'shop', name: 'p', generation: 3 },
  status: {
    observedGeneration: 3,
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'ok', lastTransitionTime: '2026-11-22T09:00:00Z', observedGeneration: 3 },
      { type: 'Reconciling', status: 'True', reason: 'Progressing', message: 'x', lastTransitionTime: '2026-11-22T09:00:00Z', observedGeneration: 3 },
    ],
  },
};

describe('deletionBlockedStatus', () => {
  it('Stalled and Ready=False with DeletionBlocked, Reconciling gone, the rest of the status kept; the message names the block and the way out', () => {
    const { message, status } = deletionBlockedStatus(policy, [{ kind: 'Service', name: 'web', why: 'PermissionDenied: grant clb:ModifyListener' }, { kind: 'Ingress', name: 'front', why: 'x' }], NOW);
    expect(message).toBe(
      'deletion waits for the revert of 2 target(s), e.g. Service web: PermissionDenied: grant clb:ModifyListener. loopguard keeps retrying; to finish without restoring, run: kubectl annotate loopbackpolicy p -n shop loopguard.dev/abandon=true',
    );
    expect(status.observedGeneration).toBe(3);
    expect(status.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'False', 'DeletionBlocked'],
      ['Stalled', 'True', 'DeletionBlocked'],
    ]);
    expect(status.conditions?.find((c) => c.type === 'Stalled')?.lastTransitionTime).toBe('2026-11-22T10:00:00Z');
  });
});
