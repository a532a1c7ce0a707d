// LoopbackRecord (loopguard.dev/v1alpha1, cluster-scoped): mirror of crds/loopguard.dev_loopbackrecords.yaml.
// One per target loopguard changed; its name is derived from the target so that lookups need no index.
import { createHash } from 'node:crypto';
import type { Originals } from './originals.js';
import type { TargetKind } from './loopbackpolicy.js';

export const RECORD_PLURAL = 'loopbackrecords';
export const RECORD_KIND = 'LoopbackRecord';
/** Label with the target's namespace, so a namespace's records are listed by selector. */
export const TARGET_NAMESPACE_LABEL = 'loopguard.dev/target-namespace';

export interface LoopbackRecordSpec {
  target: { kind: TargetKind; namespace: string; name: string; uid?: string };
  /** `kind` absent: a LoopbackPolicy (records made before the cluster kind carry none). A cluster policy's namespace is ''. */
  policy: { kind?: 'LoopbackPolicy' | 'ClusterLoopbackPolicy'; namespace: string; name: string };
  originals: Originals;
}

export interface LoopbackRecord {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: LoopbackRecordSpec;
}

/**
 * `<kind>.<namespace>.<name>` (a valid DNS subdomain: namespaces and Service names are DNS labels, Ingress names
 * DNS subdomains); a hash of it when that would exceed 253 characters.
 */
export function recordName(target: { kind: TargetKind; namespace: string; name: string }): string {
  const plain = `${target.kind.toLowerCase()}.${target.namespace}.${target.name}`;
  if (plain.length <= 253) return plain;
  return `${target.kind.toLowerCase()}.${target.namespace}.h${createHash('sha256').update(plain).digest('hex').slice(0, 40)}`;
}
