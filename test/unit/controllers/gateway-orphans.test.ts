// A deleted Gateway's record (targets.ts policyTargets → orphansOf): the EnvoyProxy its record names outlives the
// Gateway, so the release is given that EnvoyProxy and its annotations, to take loopguard's key out (docs/gateways.md
// §6) — unless the EnvoyProxy is gone, or the record of a Gateway that still exists names it too (a class's
// EnvoyProxy: the key stays for that Gateway, whose own release gives it back).
import { describe, expect, it } from '@jest/globals';
import { API_VERSION, KIND, type LoopbackPolicy } from '../../../src/api/loopbackpolicy.js';
import type { Originals } from '../../../src/api/originals.js';
import type { PolicyCaches } from '../../../src/controllers/policy/deps.js';
import { subjectOf } from '../../../src/controllers/policy/subject.js';
import { orphansOf, policyTargets } from '../../../src/controllers/policy/targets.js';
import { ownerKey, recordFor } from '../../../src/model/record-registry.js';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';

const PL = 'service.cloud.tencent.com/prevent-loopback';
const OWNER = ownerKey('shop', 'gateways');
const policy: LoopbackPolicy = { apiVersion: API_VERSION, kind: KIND, metadata: { namespace: 'shop', name: 'gateways', uid: 'uid-p', creationTimestamp: new Date(0) }, spec: { mode: 'Enforce', targets: ['Gateway'] } };
const originals = (ep: string): Originals => ({ v: 1, annotations: { [PL]: null }, envoyProxy: { namespace: 'shop', name: ep }, listeners: { 'lbl-1': { sourceIpType: 0 } }, loadBalancerId: 'lb-abcdefgh' });
const gone = recordFor({ kind: 'Gateway', namespace: 'shop', name: 'api', uid: 'uid-api' }, OWNER, originals('api-proxy'));

function caches(records: LoopbackRecord[], gateways: { name: string; uid: string }[], proxies: string[], p: LoopbackPolicy = policy): PolicyCaches {
  const ns = { name: 'shop' };
  return {
    records: () => records,
    record: (t) => records.find((r) => r.spec.target.name === t.name && r.spec.target.kind === t.kind),
    policy: () => p,
    policies: () => [p],
    clusterPolicy: () => undefined,
    clusterPolicies: () => [],
    namespace: (name) => (name === 'shop' ? ns : undefined),
    namespaces: () => [ns],
    ownNamespace: 'loopguard-system',
    services: () => [],
    ingresses: () => [],
    // Gateways of a class no controller serves: their records are what matters here, not their Services.
    gateways: (n) => (n === undefined || n === 'shop' ? gateways.map((g) => ({ metadata: { namespace: 'shop', name: g.name, uid: g.uid, labels: { skip: 'me' } }, spec: { gatewayClassName: 'none' } })) : []),
    envoyProxy: (n, name) => (n === 'shop' && proxies.includes(name) ? { metadata: { namespace: n, name }, spec: { provider: { type: 'Kubernetes', kubernetes: { envoyService: { annotations: { team: 'api', [PL]: 'true' } } } } } } : undefined),
    gatewayClass: () => undefined,
  };
}

const orphanOf = (c: PolicyCaches, entry = gone, p = policy) => {
  const t = policyTargets(subjectOf(p), c);
  return t.orphans.find((o) => o.entry === entry);
};

describe("a deleted Gateway's record", () => {
  it('carries the EnvoyProxy it names, as it is now', () => {
    const o = orphanOf(caches([gone], [], ['api-proxy']));
    expect(o).toMatchObject({ stale: true, envoyProxy: { ref: { namespace: 'shop', name: 'api-proxy' }, annotations: { team: 'api', [PL]: 'true' } } });
  });

  it.each<[string, LoopbackRecord[], { name: string; uid: string }[], string[]]>([
    ['the EnvoyProxy is gone too', [gone], [], []],
    ['a live Gateway’s record names the same EnvoyProxy', [gone, recordFor({ kind: 'Gateway', namespace: 'shop', name: 'web', uid: 'uid-web' }, OWNER, originals('api-proxy'))], [{ name: 'web', uid: 'uid-web' }], ['api-proxy']],
  ])('carries none when %s', (_why, records, gateways, proxies) => {
    const o = orphanOf(caches(records, gateways, proxies));
    expect(o?.stale).toBe(true);
    expect(o?.envoyProxy).toBeUndefined();
  });

  it('another record naming it whose Gateway is gone (or replaced) does not hold the key there', () => {
    const other = recordFor({ kind: 'Gateway', namespace: 'shop', name: 'web', uid: 'uid-web-old' }, OWNER, originals('api-proxy'));
    expect(orphanOf(caches([gone, other], [{ name: 'web', uid: 'uid-web-new' }], ['api-proxy']))?.envoyProxy?.ref).toEqual({ namespace: 'shop', name: 'api-proxy' });
  });

  it('a Gateway that still exists but left the policy carries it too: its release goes there, not to the EnvoyProxy in force now', () => {
    const narrowed: LoopbackPolicy = { ...policy, spec: { ...policy.spec, selector: { matchLabels: { team: 'other' } } } };
    const live = recordFor({ kind: 'Gateway', namespace: 'shop', name: 'api', uid: 'uid-api' }, OWNER, originals('api-proxy'));
    const o = orphanOf(caches([live], [{ name: 'api', uid: 'uid-api' }], ['api-proxy'], narrowed), live, narrowed);
    expect(o).toMatchObject({ envoyProxy: { ref: { namespace: 'shop', name: 'api-proxy' } } });
    expect(o?.stale).toBeUndefined();
  });

  it('two Gateways of one EnvoyProxy released together (their policy narrowed or deleted): neither holds it for the other', () => {
    const narrowed: LoopbackPolicy = { ...policy, spec: { ...policy.spec, selector: { matchLabels: { team: 'other' } } } };
    const a = recordFor({ kind: 'Gateway', namespace: 'shop', name: 'a', uid: 'uid-a' }, OWNER, originals('class-proxy'));
    const b = recordFor({ kind: 'Gateway', namespace: 'shop', name: 'b', uid: 'uid-b' }, OWNER, originals('class-proxy'));
    const c = caches([a, b], [{ name: 'a', uid: 'uid-a' }, { name: 'b', uid: 'uid-b' }], ['class-proxy'], narrowed);
    for (const entry of [a, b]) expect(orphanOf(c, entry, narrowed)?.envoyProxy?.ref).toEqual({ namespace: 'shop', name: 'class-proxy' });
  });

  it("the deletion, whose records are read afresh (copies of the cache's), finds its own record no holder", () => {
    const live = recordFor({ kind: 'Gateway', namespace: 'shop', name: 'api', uid: 'uid-api' }, OWNER, originals('api-proxy'));
    const [o] = orphansOf([structuredClone(live)], OWNER, new Set(), [], caches([live], [{ name: 'api', uid: 'uid-api' }], ['api-proxy']));
    expect(o?.envoyProxy?.ref).toEqual({ namespace: 'shop', name: 'api-proxy' });
  });
});
