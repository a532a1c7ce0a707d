// The Argo CD health check, run by a real Lua VM on the statuses the operator writes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { LuaFactory, type LuaEngine } from 'wasmoon';

const script = readFileSync(new URL('../../config/argocd/health.lua', import.meta.url), 'utf8');

function cond(type: string, status: string, reason: string, message = `${type} ${reason}`) {
  return { type, status, reason, message, lastTransitionTime: '2026-11-22T00:00:00Z' };
}

describe('Argo CD health check for LoopbackPolicy', () => {
  let lua: LuaEngine;
  beforeAll(async () => {
    lua = await new LuaFactory().createEngine();
  });
  afterAll(() => lua.global.close());

  async function health(obj: unknown): Promise<{ status: string; message: string }> {
    lua.global.set('obj', obj);
    return (await lua.doString(script)) as { status: string; message: string };
  }

  const meta = { name: 'p', generation: 3 };

  it.each<[string, unknown, string]>([
    ['no status yet', { metadata: meta }, 'Progressing'],
    ['status of an older generation', { metadata: meta, status: { observedGeneration: 2, conditions: [cond('Ready', 'True', 'AuditComplete')] } }, 'Progressing'],
    ['reconciling', { metadata: meta, status: { observedGeneration: 3, conditions: [cond('Ready', 'False', 'Progressing'), cond('Reconciling', 'True', 'ApplyingChanges')] } }, 'Progressing'],
    ['ready (Audit)', { metadata: meta, status: { observedGeneration: 3, conditions: [cond('Ready', 'True', 'AuditComplete', '2 at risk')] } }, 'Healthy'],
    ['ready with risks (Enforce)', { metadata: meta, status: { observedGeneration: 3, conditions: [cond('Ready', 'True', 'ReconciledWithRisks')] } }, 'Healthy'],
    ['stalled', { metadata: meta, status: { observedGeneration: 3, conditions: [cond('Ready', 'False', 'KeepaliveCapabilityMissing'), cond('Stalled', 'True', 'KeepaliveCapabilityMissing', 'file a ticket')] } }, 'Degraded'],
    ['ready unknown', { metadata: meta, status: { observedGeneration: 3, conditions: [cond('Ready', 'Unknown', 'Initializing')] } }, 'Progressing'],
    ['being deleted', { metadata: { ...meta, deletionTimestamp: '2026-11-22T00:00:00Z' }, status: { observedGeneration: 3, conditions: [cond('Ready', 'True', 'Reconciled')] } }, 'Progressing'],
  ])("%s", async (_name, obj, expected) => {
    expect((await health(obj)).status).toBe(expected);
  });

  it('explains a stalled policy with its reason and message', async () => {
    const hs = await health({
      metadata: meta,
      status: { observedGeneration: 3, conditions: [cond('Stalled', 'True', 'PermissionDenied', 'grant clb:ModifyListener')] },
    });
    expect(hs).toEqual({ status: 'Degraded', message: 'PermissionDenied: grant clb:ModifyListener' });
  });
});
