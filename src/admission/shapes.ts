// Pure: what the admission policy (config/components/admission-warnings, src/admission/policy.ts) can tell about a Service or Ingress from
// the object alone, and which of those "shapes" the model finds at risk in this cluster.
//
// The policy's CEL decides only what the object says outright, the way the model's gates read it: the kind and type,
// the opt-outs (loopguard.dev/skip, TKE's mode: skip), the ingress class, whether TKE builds a private CLB (the
// internal-subnetid / ingress.subnetId annotation: a manifest without it gets a public CLB, and one that names an
// existing CLB leaves its type open, src/cli/offline.ts). Everything that decides the verdict beyond that — the
// kube-proxy profile, externalTrafficPolicy, direct-access, prevent-loopback, a TkeServiceConfig path — is a shape
// key; the operator runs `loopguard plan`'s offline assessment (the real model) on one manifest per shape under the
// cluster's profile and writes the shapes that are at risk whatever the CLB facts a manifest cannot carry (the
// health-check source, keepalive) into the parameters. So the policy warns exactly where `loopguard plan` finds a
// risk with no condition attached, never more.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import type { TargetKind } from '../api/loopbackpolicy.js';
import { planReport } from '../cli/offline.js';
import { isTrue, nonEmpty } from './cel.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import type { RootCauseId } from '../model/root-causes.js';

/** One bit of a shape: its key segment and how a manifest carries it. */
interface ShapeBit {
  segment: string;
  /** How the policy's CEL reads the bit from the object (src/admission/policy.ts). */
  cel: string;
  /** Manifests that carry the bit; the shape is at risk only when the model says so for every one of them. */
  variants: ReadonlyArray<(o: Manifest) => void>;
}

type Manifest = V1Service | V1Ingress;

const annotate = (key: string, value: string) => (o: Manifest) => {
  o.metadata = { ...o.metadata, annotations: { ...o.metadata?.annotations, [key]: value } };
};

/** The Service bits, in key order (the CEL builds the same key: src/admission/policy.ts). */
export const SERVICE_BITS: readonly ShapeBit[] = [
  { segment: 'etpLocal', cel: '(has(object.spec.externalTrafficPolicy) && object.spec.externalTrafficPolicy == "Local")', variants: [(o) => ((o as V1Service).spec = { ...(o as V1Service).spec, externalTrafficPolicy: 'Local' })] },
  { segment: 'directAccess', cel: isTrue(ServiceAnnotation.DirectAccess), variants: [annotate(ServiceAnnotation.DirectAccess, 'true')] },
  { segment: 'preventLoopback', cel: isTrue(ServiceAnnotation.PreventLoopback), variants: [annotate(ServiceAnnotation.PreventLoopback, 'true')] },
];

/** The Ingress bits: a TkeServiceConfig named or generated may carry keepalive, which the object does not show. */
export const INGRESS_BITS: readonly ShapeBit[] = [
  {
    segment: 'keepaliveConfig',
    cel: `(${nonEmpty(IngressAnnotation.TkeServiceConfig)} || ${isTrue(IngressAnnotation.TkeServiceConfigAuto)})`,
    variants: [annotate(IngressAnnotation.TkeServiceConfig, 'my-config'), annotate(IngressAnnotation.TkeServiceConfigAuto, 'true')] },
];

const NAMESPACE = 'shape';

function baseManifest(kind: TargetKind): Manifest {
  if (kind === 'Service') {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'shape', namespace: NAMESPACE, annotations: { [ServiceAnnotation.InternalSubnetId]: 'subnet-shape' } },
      spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', ports: [{ port: 80, protocol: 'TCP' }] },
    };
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'shape', namespace: NAMESPACE, annotations: { [IngressAnnotation.SubnetId]: 'subnet-shape' } },
    spec: { rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'backend', port: { number: 80 } } } }] } }] },
  };
}

export interface Shape {
  kind: TargetKind;
  /** `Service.etpLocal.preventLoopback`, `Ingress`, …: the parameter key is `risk.<key>`. */
  key: string;
  /** One manifest per combination of the bits' variants. */
  manifests: Manifest[];
}

/** Every shape of a kind: each subset of its bits, in key order. */
export function shapesOf(kind: TargetKind): Shape[] {
  const bits = kind === 'Service' ? SERVICE_BITS : INGRESS_BITS;
  const out: Shape[] = [];
  for (let mask = 0; mask < 1 << bits.length; mask++) {
    const on = bits.filter((_, i) => (mask & (1 << i)) !== 0);
    let manifests: Manifest[] = [baseManifest(kind)];
    for (const bit of on) manifests = manifests.flatMap((m) => bit.variants.map((apply) => { const c = structuredClone(m); apply(c); return c; }));
    out.push({ kind, key: [kind, ...on.map((b) => b.segment)].join('.'), manifests });
  }
  return out;
}

/** The shapes `loopguard plan` finds at risk in a cluster with this profile, with no condition, and their one root cause. */
export function riskyShapes(profile: ClusterProfile): Map<string, RootCauseId> {
  const out = new Map<string, RootCauseId>();
  for (const shape of [...shapesOf('Service'), ...shapesOf('Ingress')]) {
    const causes = new Set<string>();
    let certain = true;
    for (const m of shape.manifests) {
      const set = {
        services: shape.kind === 'Service' ? [{ object: m as V1Service, source: { file: 'shape', line: 1 } }] : [],
        ingresses: shape.kind === 'Ingress' ? [{ object: m as V1Ingress, source: { file: 'shape', line: 1 } }] : [],
        tkeServiceConfigs: [],
        policies: [],
        skipped: 0,
      };
      const [t] = planReport(set, { profile, pinned: {}, now: new Date(0) }).targets;
      if (!t || t.verdict !== 'AtRisk' || t.condition !== undefined) certain = false;
      else causes.add(t.rootCause);
    }
    const [cause] = [...causes];
    if (certain && causes.size === 1 && cause) out.set(shape.key, cause as RootCauseId);
  }
  return out;
}
