// The Argo CD health checks, run by a real Lua VM on the statuses the operator writes. The scripts are taken from the
// argocd-cm that `kubectl kustomize config/argocd` renders, under the key Argo CD looks up for each kind
// (resource.customizations.health.<group>_<kind>), so a kind without its key fails here. LoopbackPolicy and
// ClusterLoopbackPolicy write the same kstatus conditions (docs/cluster-policy.md §7): the same cases hold for both.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { LuaFactory, type LuaEngine } from 'wasmoon';
import { API_VERSION, GROUP, KIND } from '../../src/api/loopbackpolicy.js';
import { CLUSTER_KIND } from '../../src/api/clusterloopbackpolicy.js';

const KINDS = [KIND, CLUSTER_KIND] as const;
const healthKey = (kind: string) => `resource.customizations.health.${GROUP}_${kind}`;
const rendered = parse(execFileSync('kubectl', ['kustomize', fileURLToPath(new URL('../../config/argocd', import.meta.url))], { encoding: 'utf8', timeout: 60_000 })) as {
  metadata: { name: string; namespace: string };
  data: Record<string, string>;
};

function cond(type: string, status: string, reason: string, message = `${type} ${reason}`) {
  return { type, status, reason, message, lastTransitionTime: '2026-11-22T00:00:00Z' };
}

describe('config/argocd', () => {
  it("renders Argo CD's argocd-cm with one health check per loopguard policy kind, each config/argocd/health.lua", () => {
    expect(rendered.metadata).toMatchObject({ name: 'argocd-cm', namespace: 'argocd' });
    expect(Object.keys(rendered.data).sort()).toEqual(KINDS.map(healthKey).sort());
    const script = readFileSync(new URL('../../config/argocd/health.lua', import.meta.url), 'utf8');
    for (const kind of KINDS) expect({ kind, same: rendered.data[healthKey(kind)] === script }).toEqual({ kind, same: true });
  });
});

describe.each(KINDS)('Argo CD health check for %s', (kind) => {
  const script = rendered.data[healthKey(kind)] ?? '';
  let lua: LuaEngine;
  beforeAll(async () => {
    lua = await new LuaFactory().createEngine();
  });
  afterAll(() => lua.global.close());

  async function health(obj: unknown): Promise<{ status: string; message: string }> {
    lua.global.set('obj', obj);
    return (await lua.doString(script)) as { status: string; message: string };
  }

  // The object as Argo CD hands it over: the cluster kind has no namespace, and its status counts namespaces too.
  const cluster = kind === CLUSTER_KIND;
  const meta = { name: 'p', generation: 3, ...(cluster ? {} : { namespace: 'shop' }) };
  const object = (metadata: Record<string, unknown>, status?: Record<string, unknown>) => ({
    apiVersion: API_VERSION,
    kind,
    metadata,
    ...(status === undefined ? {} : { status: cluster ? { namespaces: { selected: 4, enforce: 1, audit: 3, excluded: 3 }, ...status } : status }),
  });

  it.each<[string, unknown, string]>([
    ['no status yet', object(meta), 'Progressing'],
    ['status of an older generation', object(meta, { observedGeneration: 2, conditions: [cond('Ready', 'True', 'AuditComplete')] }), 'Progressing'],
    ['status without observedGeneration', object(meta, { conditions: [cond('Ready', 'True', 'AuditComplete')] }), 'Progressing'],
    ['reconciling', object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'False', 'Progressing'), cond('Reconciling', 'True', 'ApplyingChanges')] }), 'Progressing'],
    ['ready (Audit)', object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'True', 'AuditComplete', '2 at risk')] }), 'Healthy'],
    ['ready with risks (Enforce)', object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'True', 'ReconciledWithRisks')] }), 'Healthy'],
    ['stalled', object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'False', 'KeepaliveCapabilityMissing'), cond('Stalled', 'True', 'KeepaliveCapabilityMissing', 'file a ticket')] }), 'Degraded'],
    ['ready unknown', object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'Unknown', 'Initializing')] }), 'Progressing'],
    ['being deleted', object({ ...meta, deletionTimestamp: '2026-11-22T00:00:00Z' }, { observedGeneration: 3, conditions: [cond('Ready', 'True', 'Reconciled')] }), 'Progressing'],
  ])('%s', async (_name, obj, expected) => {
    expect((await health(obj)).status).toBe(expected);
  });

  it('explains a stalled policy with its reason and message', async () => {
    const hs = await health(object(meta, { observedGeneration: 3, conditions: [cond('Stalled', 'True', 'PermissionDenied', 'grant clb:ModifyListener')] }));
    expect(hs).toEqual({ status: 'Degraded', message: 'PermissionDenied: grant clb:ModifyListener' });
  });

  it("shows Ready's message when healthy and while Ready is not True", async () => {
    expect(await health(object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'True', 'AuditComplete', '4 namespaces, 2 targets at risk')] }))).toEqual({
      status: 'Healthy',
      message: '4 namespaces, 2 targets at risk',
    });
    expect(await health(object(meta, { observedGeneration: 3, conditions: [cond('Ready', 'False', 'Progressing', '3 of 4 namespaces evaluated')] }))).toEqual({
      status: 'Progressing',
      message: '3 of 4 namespaces evaluated',
    });
  });
});
