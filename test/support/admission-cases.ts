// One table of cases for the admission warning (test/integration/admission-warnings.test.ts): each is applied with
// `kubectl apply` on the real apiserver, where the ValidatingAdmissionPolicy must warn exactly for the cases with
// `warn`, and the same manifests go through `loopguard plan -f`, which must find exactly those at risk with no
// condition and no Enforce policy over them, so GitOps pipelines and `kubectl apply` agree. The cluster runs the
// `ipvs-new` profile (TKE kube-proxy that supports prevent-loopback).
import { IngressAnnotation, LoopguardAnnotation, ServiceAnnotation } from '../../src/api/annotations.js';
import type { RootCauseId } from '../../src/model/root-causes.js';

export interface AdmissionCase {
  name: string;
  why: string;
  /** Applied in the namespace an Enforce policy covers. */
  covered?: boolean;
  /** The root cause the warning names; absent: no warning. */
  warn?: RootCauseId;
  manifest: Record<string, unknown>;
}

const PRIVATE = { [ServiceAnnotation.InternalSubnetId]: 'subnet-admission' };

function service(name: string, annotations: Record<string, string>, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, annotations },
    spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', selector: { app: name }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec },
  };
}

function ingress(name: string, annotations: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, annotations },
    spec: { rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
}

export const ADMISSION_CASES: readonly AdmissionCase[] = [
  { name: 'private-local', why: 'private CLB, ETP Local, IPVS: the pod IP reaches the CLB', warn: 'PodSourceNotMasqueraded', manifest: service('private-local', PRIVATE) },
  {
    name: 'private-direct',
    why: 'direct-access: the CLB sends calls to pods, also on the caller’s node',
    warn: 'DirectAccessSameNode',
    manifest: service('private-direct', { ...PRIVATE, [ServiceAnnotation.DirectAccess]: 'true' }, { externalTrafficPolicy: 'Cluster' }),
  },
  { name: 'private-cluster', why: 'ETP Cluster masquerades to the node IP', manifest: service('private-cluster', PRIVATE, { externalTrafficPolicy: 'Cluster' }) },
  { name: 'public-local', why: 'a public CLB sees the node’s public egress IP', manifest: service('public-local', {}) },
  { name: 'skipped', why: 'opted out with loopguard.dev/skip', manifest: service('skipped', { ...PRIVATE, [LoopguardAnnotation.Skip]: 'true' }) },
  { name: 'tke-skip', why: 'TKE told to skip it (mode: skip)', manifest: service('tke-skip', { ...PRIVATE, [ServiceAnnotation.Mode]: 'skip' }) },
  { name: 'annotated', why: 'already carries prevent-loopback (upper case tolerated, as the model reads it)', manifest: service('annotated', { ...PRIVATE, [ServiceAnnotation.PreventLoopback]: ' True' }) },
  { name: 'other-lb', why: 'spec.loadBalancerClass: another controller owns it', manifest: service('other-lb', PRIVATE, { loadBalancerClass: 'example.com/other' }) },
  { name: 'existing-clb', why: 'an existing CLB: its type is not in the object (plan: AtRisk only if it is private)', manifest: service('existing-clb', { [ServiceAnnotation.ExistingLoadBalancerId]: 'lb-12345678' }) },
  { name: 'covered-local', why: 'an Enforce policy covers the namespace', covered: true, manifest: service('covered-local', PRIVATE) },
  { name: 'private-ingress', why: 'private L7 CLB without keepalive', warn: 'L7Loopback', manifest: ingress('private-ingress', { [IngressAnnotation.SubnetId]: 'subnet-admission' }) },
  { name: 'public-ingress', why: 'public L7 CLB', manifest: ingress('public-ingress', {}) },
  {
    name: 'config-ingress',
    why: 'a TkeServiceConfig may carry keepalive (plan: AtRisk only if keepalive is off)',
    manifest: ingress('config-ingress', { [IngressAnnotation.SubnetId]: 'subnet-admission', [IngressAnnotation.TkeServiceConfigAuto]: 'true' }),
  },
  { name: 'nginx-ingress', why: 'not a CLB Ingress', manifest: ingress('nginx-ingress', { [IngressAnnotation.SubnetId]: 'subnet-admission', [IngressAnnotation.Class]: 'nginx' }) },
  { name: 'covered-ingress', why: 'an Enforce policy covers the namespace', covered: true, manifest: ingress('covered-ingress', { [IngressAnnotation.SubnetId]: 'subnet-admission' }) },
];
