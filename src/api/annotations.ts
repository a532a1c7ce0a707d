// Every annotation loopguard reads or writes, and one typed, total parser for them. Parsing never
// throws: an unparsable value comes back as `invalid` with the raw text and a sentence the caller can
// put into a Warning Event (EventReason.InvalidAnnotation), so one bad annotation cannot wedge a reconcile.
// TKE spellings: docs/tencent-cloud.md §2.
import { quoteValue } from './text.js';
import type { TargetKind } from './loopbackpolicy.js';

/** TKE Service annotations. */
export const ServiceAnnotation = {
  /** Read-only, written by TKE: the CLB id (`lb-xxxxxxxx`) backing the Service. */
  LoadBalancerId: 'service.kubernetes.io/loadbalance-id',
  /** Present → TKE creates a private (INTERNAL) CLB in that subnet. */
  InternalSubnetId: 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid',
  /** Use an existing CLB. */
  ExistingLoadBalancerId: 'service.kubernetes.io/tke-existed-lbid',
  /** `"true"`: TKE kube-proxy binds the CLB VIP locally; service-controller switches the HC source to 100.64. */
  PreventLoopback: 'service.cloud.tencent.com/prevent-loopback',
  /** `"true"`: the CLB binds Pods directly (VPC-CNI / GlobalRouter), no NodePort. */
  DirectAccess: 'service.cloud.tencent.com/direct-access',
  /** `skip`: TKE's service-controller stops syncing the Service. */
  Mode: 'service.cloud.tencent.com/mode',
  TkeServiceConfig: 'service.cloud.tencent.com/tke-service-config',
  TkeServiceConfigAuto: 'service.cloud.tencent.com/tke-service-config-auto',
  /** Which protocol a Service port is exposed as (may create HTTP/HTTPS listeners for a Service). */
  SpecifyProtocol: 'service.cloud.tencent.com/specify-protocol',
} as const;

/** TKE (CLB type) Ingress annotations. */
export const IngressAnnotation = {
  /** Ingress class; TKE treats an Ingress without a class as `qcloud`. */
  Class: 'kubernetes.io/ingress.class',
  /** Read-only, written by TKE's ingress controller: the CLB id. */
  LoadBalancerId: 'kubernetes.io/ingress.qcloud-loadbalance-id',
  ExistingLoadBalancerId: 'kubernetes.io/ingress.existLbId',
  /** Present → private CLB in that subnet. */
  SubnetId: 'kubernetes.io/ingress.subnetId',
  DirectAccess: 'ingress.cloud.tencent.com/direct-access',
  /** `skip`: TKE's ingress controller stops syncing the Ingress. */
  Mode: 'ingress.cloud.tencent.com/mode',
  TkeServiceConfig: 'ingress.cloud.tencent.com/tke-service-config',
  TkeServiceConfigAuto: 'ingress.cloud.tencent.com/tke-service-config-auto',
  /** `"true"`/`"false"`: TKE sets the CLB's LoadBalancerPassToTarget to it (tencent-cloud.md §9 #5). */
  PassToTarget: 'ingress.cloud.tencent.com/pass-to-target',
} as const;

/** The ingress class TKE's CLB ingress controller serves. */
export const TKE_INGRESS_CLASS = 'qcloud';

/** loopguard's own annotations on targets. */
export const LoopguardAnnotation = {
  /** `"true"` opts a Service/Ingress out: loopguard reports it as Skipped and reverts what it changed. */
  Skip: 'loopguard.dev/skip',
} as const;

/** TKE's TkeServiceConfig resource (cloud.tencent.com/v1alpha1), watched by the operator and edited by L7. */
export const TKE_SERVICE_CONFIG = { group: 'cloud.tencent.com', version: 'v1alpha1', plural: 'tkeserviceconfigs' } as const;

export type Annotations = Readonly<Record<string, string>> | undefined;

/** Result of reading one annotation. `absent` is not an error. */
export type AnnotationValue<T> =
  | { readonly kind: 'absent' }
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'invalid'; readonly key: string; readonly raw: string; readonly error: string };

const ABSENT = Object.freeze({ kind: 'absent' as const });

function invalid(key: string, raw: string, error: string): AnnotationValue<never> {
  return { kind: 'invalid', key, raw, error: invalidAnnotationText(key, raw, error) };
}

/** The sentence for an Event: the annotation, its value quoted (escaped, clipped: anyone with `edit` writes it), what is wrong. */
export function invalidAnnotationText(key: string, raw: string, error: string): string {
  return `annotation ${key}=${quoteValue(raw)}: ${error}`;
}

export function readString(annotations: Annotations, key: string): AnnotationValue<string> {
  const raw = annotations?.[key];
  return raw === undefined ? ABSENT : { kind: 'value', value: raw };
}

/**
 * Booleans as TKE writes them: `"true"`/`"false"`. Case and surrounding space are tolerated because a
 * hand-written `True` plainly means true; anything else is invalid rather than silently false.
 */
export function readBool(annotations: Annotations, key: string): AnnotationValue<boolean> {
  const raw = annotations?.[key];
  if (raw === undefined) return ABSENT;
  const v = raw.trim().toLowerCase();
  if (v === 'true') return { kind: 'value', value: true };
  if (v === 'false') return { kind: 'value', value: false };
  return invalid(key, raw, 'expected "true" or "false"');
}

export function readEnum<T extends string>(annotations: Annotations, key: string, allowed: readonly T[]): AnnotationValue<T> {
  const raw = annotations?.[key];
  if (raw === undefined) return ABSENT;
  const v = raw.trim();
  const match = allowed.find((a) => a.toLowerCase() === v.toLowerCase());
  return match !== undefined
    ? { kind: 'value', value: match }
    : invalid(key, raw, `expected one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
}

/** JSON with a shape check; `validate` returns an error sentence or undefined when the value is fine. */
export function readJson<T>(
  annotations: Annotations,
  key: string,
  validate: (value: unknown) => string | undefined,
): AnnotationValue<T> {
  const raw = annotations?.[key];
  if (raw === undefined) return ABSENT;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return invalid(key, raw, `not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const problem = validate(parsed);
  return problem === undefined ? { kind: 'value', value: parsed as T } : invalid(key, raw, problem);
}

/** The value, or `fallback` when absent or invalid (callers that must report invalid values check `kind`). */
export function valueOr<T>(result: AnnotationValue<T>, fallback: T): T {
  return result.kind === 'value' ? result.value : fallback;
}

// ---- CLB values (the originals a LoopbackRecord holds are in originals.ts) -------------------------

/** A health check's source: 0 the CLB's VIP, 1 100.64.0.0/10. */
export type SourceIpType = 0 | 1;

/**
 * A CLB id as the CLB API gives them (`lb-` and 8 lower-case letters and digits; up to 64 characters allowed, the
 * status field's bound). Anything else names no CLB and is never sent to the CLB API.
 */
export function isClbId(id: string): boolean {
  return /^lb-[0-9a-z]{1,61}$/.test(id);
}

// ---- target-level readings used by the model --------------------------------------------------------

export type SkipSource = 'loopguard' | 'tke';

/**
 * Whether a target is opted out, and by which annotation. `loopguard.dev/skip: "true"` opts out of
 * loopguard; TKE's `<kind>/mode: skip` stops TKE's own controller, so any CLB change loopguard made
 * through TkeServiceConfig would not be applied (and direct CLB writes would be the user's to own).
 */
export function readSkip(
  annotations: Annotations,
  kind: TargetKind,
  options: { ignoreOwn?: boolean } = {},
): { skipped: SkipSource | undefined; problems: string[] } {
  const problems: string[] = [];
  const own = options.ignoreOwn ? ({ kind: 'absent' } as const) : readBool(annotations, LoopguardAnnotation.Skip);
  // An unparsable opt-out ("yes", "1") is honoured: touching a target its owner tried to exclude is
  // worse than skipping one by mistake. The problem is still reported so the owner can fix the value.
  if (own.kind === 'invalid') return { skipped: 'loopguard', problems: [own.error] };
  if (own.kind === 'value' && own.value) return { skipped: 'loopguard', problems };
  // A Gateway's TKE mode is on its generated Service, which its assessment reads as a Service's.
  if (kind === 'Gateway') return { skipped: undefined, problems };
  const modeKey = kind === 'Service' ? ServiceAnnotation.Mode : IngressAnnotation.Mode;
  const mode = readString(annotations, modeKey);
  if (mode.kind === 'value' && mode.value.trim().toLowerCase() === 'skip') return { skipped: 'tke', problems };
  return { skipped: undefined, problems };
}
