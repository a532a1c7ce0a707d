// Text shared by several step kinds' descriptions: the wording of a health-check source, a TkeServiceConfig field
// edit and an originals record is the same wherever a step names one.
import type { OriginalsRecord, SourceIpType } from '../../api/annotations.js';
import type { FieldEdit, Removal } from '../config-patch.js';

export const SOURCE: Record<SourceIpType, string> = { 0: 'VIP', 1: '100.64.0.0/10' };

export function editText(e: FieldEdit): string {
  return e.kind === 'keepalive'
    ? `keepaliveEnable: ${e.value} on ${e.protocol}:${e.port}`
    : `rule ${e.domain || '<default>'}${e.url} (${e.protocol}:${e.port}) healthCheck.sourceIpType: ${e.value} (enable: ${String(e.enable)} as on the CLB, where undeclared)`;
}

export function removalText(r: Removal): string {
  const what = [r.level, r.enableAdded ? 'healthCheck.enable' : undefined].filter((x) => x !== undefined).join(' + ');
  return `${editText(r.edit)} (${what})`;
}

export function recordText(record: OriginalsRecord): string {
  const parts: string[] = [];
  const listeners = Object.keys(record.listeners ?? {}).length;
  const rules = Object.keys(record.rules ?? {}).length;
  const annotations = Object.keys(record.annotations ?? {}).length;
  if (listeners > 0) parts.push(`${listeners} listener(s)`);
  if (rules > 0) parts.push(`${rules} rule(s)`);
  if (annotations > 0) parts.push(`${annotations} annotation(s)`);
  if (record.loadBalancer?.passToTarget !== undefined) parts.push('LoadBalancerPassToTarget');
  return parts.length > 0 ? parts.join(', ') : 'nothing new';
}
