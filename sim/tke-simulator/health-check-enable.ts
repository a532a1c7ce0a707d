// A TkeServiceConfig `healthCheck` fragment without `enable`. TKE's reference marks the field required ("必填，布尔值",
// docs/tencent-cloud.md §1: TKE docs 457/45490 and 457/45700), and every config TKE generates carries it; what TKE's
// closed-source controllers do with a fragment that lacks it is not documented. The simulator offers both plausible
// readings, as worlds (sim/README.md, assumptions):
//  - `refused`: the config fails validation; TKE applies none of it, leaves the CLB as it is, and says so in a
//    Warning Event on the Service/Ingress (reason SyncLoadBalancerFailed) at every sync until it is fixed;
//  - `switchOff`: the fragment is decoded into a Go struct whose `Enable bool` is then false, so the check it declares
//    is switched off (HealthSwitch 0), with its other declared fields applied.
// Pure.
import type { TkeServiceConfigSpec } from './tke-service-config.js';

export type MissingEnableReading = 'refused' | 'switchOff';
export const MISSING_ENABLE_READINGS: readonly MissingEnableReading[] = ['refused', 'switchOff'];

/** Whether a declared `healthCheck` lacks its switch (a non-boolean value cannot pass the CRD's schema). */
export function lacksEnable(hc: unknown): boolean {
  return typeof hc === 'object' && hc !== null && typeof (hc as { enable?: unknown }).enable !== 'boolean';
}

/** Where the spec has `healthCheck` fragments without `enable`, as field paths (`spec.loadBalancer.l7Listeners[0]…`). */
export function healthChecksWithoutEnable(spec: TkeServiceConfigSpec | undefined): string[] {
  const out: string[] = [];
  const lb = spec?.loadBalancer;
  const base = 'spec.loadBalancer';
  (lb?.l4Listeners ?? []).forEach((l, i) => {
    if (lacksEnable(l?.healthCheck)) out.push(`${base}.l4Listeners[${i}].healthCheck`);
  });
  (lb?.l7Listeners ?? []).forEach((l, i) => {
    if (lacksEnable(l?.['healthCheck'])) out.push(`${base}.l7Listeners[${i}].healthCheck`);
    (l?.domains ?? []).forEach((d, j) => {
      (d?.rules ?? []).forEach((r, k) => {
        if (lacksEnable(r?.healthCheck)) out.push(`${base}.l7Listeners[${i}].domains[${j}].rules[${k}].healthCheck`);
      });
    });
  });
  return out;
}

/** The Warning Event message of a refused config (reading `refused`); the wording is assumed, TKE's is not public. */
export function refusalMessage(configName: string, paths: readonly string[]): string {
  const shown = paths.slice(0, 3).join(', ');
  const more = paths.length > 3 ? ` and ${paths.length - 3} more` : '';
  return `TkeServiceConfig ${configName} invalid, not applied: ${shown}${more}: field "enable" is required (bool)`;
}
