// The TkeServiceConfig resource as the simulator reads and writes it (sim/crds/, docs/tencent-cloud.md §1).
// Every object type keeps an index signature: fields we do not model must survive a read-modify-write.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { AUTO_INGRESS_CONFIG_SUFFIX, AUTO_SERVICE_CONFIG_SUFFIX } from './annotations.js';

export const TKE_SERVICE_CONFIG = {
  group: 'cloud.tencent.com',
  version: 'v1alpha1',
  plural: 'tkeserviceconfigs',
  kind: 'TkeServiceConfig',
} as const;
export const TKE_SERVICE_CONFIG_API_VERSION = `${TKE_SERVICE_CONFIG.group}/${TKE_SERVICE_CONFIG.version}`;

export interface TkeHealthCheck {
  enable?: boolean;
  intervalTime?: number;
  healthNum?: number;
  unHealthNum?: number;
  timeout?: number;
  httpCheckPath?: string;
  httpCheckDomain?: string;
  httpCheckMethod?: string;
  /** 0 = CLB VIP, 1 = 100.64.0.0/10. */
  sourceIpType?: number;
  httpCode?: number;
  [field: string]: unknown;
}

export interface TkeSession {
  enable?: boolean;
  /** The same switch as some of Tencent's Ingress samples spell it (tencent-cloud.md §9 #10). */
  enabled?: boolean;
  sessionExpireTime?: number;
  [field: string]: unknown;
}

export interface TkeL4Listener {
  protocol: string;
  port: number;
  session?: TkeSession;
  healthCheck?: TkeHealthCheck;
  scheduler?: string;
  [field: string]: unknown;
}

export interface TkeL7Rule {
  url: string;
  forwardType?: string;
  session?: TkeSession;
  healthCheck?: TkeHealthCheck;
  scheduler?: string;
  [field: string]: unknown;
}

export interface TkeL7Domain {
  /** "" = the CLB VIP (default domain). */
  domain?: string;
  rules?: TkeL7Rule[];
  [field: string]: unknown;
}

export interface TkeL7Listener {
  protocol: string;
  port: number;
  defaultServer?: string;
  keepaliveEnable?: number;
  domains?: TkeL7Domain[];
  [field: string]: unknown;
}

export interface TkeLoadBalancerConfig {
  l4Listeners?: TkeL4Listener[];
  l7Listeners?: TkeL7Listener[];
  internetMaxBandwidthOut?: number;
  [field: string]: unknown;
}

export interface TkeServiceConfigSpec {
  loadBalancer?: TkeLoadBalancerConfig;
  [field: string]: unknown;
}

export interface TkeServiceConfig {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: TkeServiceConfigSpec;
}

export type ConfigOwnerKind = 'Service' | 'Ingress';

export function autoConfigName(kind: ConfigOwnerKind, ownerName: string): string {
  return `${ownerName}${kind === 'Service' ? AUTO_SERVICE_CONFIG_SUFFIX : AUTO_INGRESS_CONFIG_SUFFIX}`;
}

/** The owner an auto config belongs to, judged by its name only. */
export function autoConfigOwner(configName: string): { kind: ConfigOwnerKind; name: string } | undefined {
  if (configName.endsWith(AUTO_SERVICE_CONFIG_SUFFIX)) {
    return { kind: 'Service', name: configName.slice(0, -AUTO_SERVICE_CONFIG_SUFFIX.length) };
  }
  if (configName.endsWith(AUTO_INGRESS_CONFIG_SUFFIX)) {
    return { kind: 'Ingress', name: configName.slice(0, -AUTO_INGRESS_CONFIG_SUFFIX.length) };
  }
  return undefined;
}

export type ConfigChoice =
  | { kind: 'none' }
  | { kind: 'auto'; name: string }
  | { kind: 'manual'; name: string }
  | { kind: 'invalid'; reason: string };

/**
 * Which config applies, from the owner's two mutually exclusive annotations (tencent-cloud.md §1): the auto one
 * (value must be a bool, TKE error E4050) or a hand-made name that must not look auto-generated (E4051).
 */
export function chooseConfig(
  kind: ConfigOwnerKind,
  ownerName: string,
  autoValue: string | undefined,
  manualName: string | undefined,
  keys: { auto: string; manual: string },
): ConfigChoice {
  const auto = autoValue?.trim().toLowerCase();
  const manual = manualName?.trim() || undefined;
  if (auto !== undefined && auto !== '' && auto !== 'true' && auto !== 'false') {
    return { kind: 'invalid', reason: `Annotation '${keys.auto}' Invalid: the valid values are true or false` };
  }
  if (auto === 'true' && manual) {
    return { kind: 'invalid', reason: `Annotations '${keys.auto}' and '${keys.manual}' cannot be used together` };
  }
  if (auto === 'true') return { kind: 'auto', name: autoConfigName(kind, ownerName) };
  if (manual) {
    if (autoConfigOwner(manual)) {
      return {
        kind: 'invalid',
        reason: `Annotation '${keys.manual}' Name Invalid: it cannot end with '${AUTO_INGRESS_CONFIG_SUFFIX}' or '${AUTO_SERVICE_CONFIG_SUFFIX}'`,
      };
    }
    return { kind: 'manual', name: manual };
  }
  return { kind: 'none' };
}
