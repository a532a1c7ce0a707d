// Text shared by several step kinds' descriptions: the wording of a health-check source and a TkeServiceConfig field
// edit is the same wherever a step names one (originals are described by describeOriginals, src/api/originals.ts).
import type { SourceIpType } from '../../api/annotations.js';
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
