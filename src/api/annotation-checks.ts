// Pure: every annotation loopguard reads on a target, checked in one place, whatever path the assessment then takes
// (a bad value on a target still waiting for its CLB is reported as soon as one on a finished target). Each problem is
// one sentence for a Warning Event (EventReason.InvalidAnnotation): the annotation, the value (quoted, escaped and
// clipped), what is allowed and what loopguard does meanwhile. Parsing stays total: a bad value is read as
// documented here, never thrown.
import { IngressAnnotation, LoopguardAnnotation, ServiceAnnotation, invalidAnnotationText, isClbId, type Annotations } from './annotations.js';
import type { TargetKind } from './loopbackpolicy.js';

type Kind = TargetKind;

const BOOL = ['true', 'false'];
/** A Kubernetes object name (DNS-1123 subdomain), as a TkeServiceConfig's. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

interface Check {
  key: string;
  /** Undefined when the (trimmed, as the readers trim) value is fine, else what is allowed and what happens meanwhile. */
  problem(value: string): string | undefined;
}

const oneOf = (allowed: readonly string[], meanwhile: string) => (v: string) =>
  allowed.includes(v.toLowerCase()) ? undefined : `expected ${allowed.map((a) => JSON.stringify(a)).join(' or ')}; ${meanwhile}`;

const boolean = (meanwhile: string) => oneOf(BOOL, meanwhile);

const objectName = (v: string) =>
  v.length <= 253 && OBJECT_NAME.test(v)
    ? undefined
    : 'expected the name of a TkeServiceConfig in this namespace (at most 253 lower-case letters, digits, "-" and ".", starting and ending with a letter or digit); loopguard finds no config by this name';

const clbId = (v: string) =>
  isClbId(v)
    ? undefined
    : 'expected a CLB id such as lb-abcd1234, which TKE writes here; loopguard reads no CLB for this target. If someone changed it, remove the change and TKE writes the id back';

const SKIP: Check = { key: LoopguardAnnotation.Skip, problem: boolean('loopguard treats the target as opted out until it is fixed') };

function tkeChecks(kind: 'Service' | 'Ingress'): Check[] {
  const a = kind === 'Service' ? ServiceAnnotation : IngressAnnotation;
  return [
    { key: a.Mode, problem: oneOf(['skip'], "loopguard knows only TKE's \"skip\" and treats the target as synced by TKE") },
    { key: a.DirectAccess, problem: boolean('loopguard treats it as not set') },
    { key: a.TkeServiceConfig, problem: objectName },
    { key: a.LoadBalancerId, problem: clbId },
  ];
}

const CHECKS: Record<Kind, readonly Check[]> = {
  Service: [SKIP, ...tkeChecks('Service'), { key: ServiceAnnotation.PreventLoopback, problem: boolean('loopguard treats it as not set') }],
  Ingress: [
    SKIP,
    ...tkeChecks('Ingress'),
    { key: IngressAnnotation.TkeServiceConfigAuto, problem: boolean('loopguard treats it as not set') },
    { key: IngressAnnotation.PassToTarget, problem: boolean('loopguard leaves the CLB\'s "allow traffic by default" to TKE and does not change it') },
  ],
  // TKE reads its annotations on the Service Envoy Gateway generates, which is checked as a Service.
  Gateway: [SKIP],
};

/** The keys checked for a kind (documentation and tests). */
export function checkedAnnotations(kind: Kind): string[] {
  return CHECKS[kind].map((c) => c.key);
}

export interface AnnotationProblem {
  key: string;
  /** The sentence for the Warning Event. */
  message: string;
}

/** One problem per annotation of the target whose value loopguard cannot use; empty when all are fine. */
export function annotationProblems(annotations: Annotations, kind: Kind): AnnotationProblem[] {
  const out: AnnotationProblem[] = [];
  for (const c of CHECKS[kind]) {
    const raw = annotations?.[c.key];
    if (raw === undefined) continue;
    const problem = c.problem(raw.trim());
    if (problem !== undefined) out.push({ key: c.key, message: invalidAnnotationText(c.key, raw, problem) });
  }
  return out;
}
