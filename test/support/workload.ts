// Sample targets for end-to-end suites and benchmarks: LoadBalancer Services and Ingresses as TKE users write them.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';

/** Makes TKE create a private (INTERNAL) CLB in this subnet. */
export const PRIVATE_SUBNET: Readonly<Record<string, string>> = {
  'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid': 'subnet-test0001',
};

export type PortSpec = number | [number, 'TCP' | 'UDP'];

/** A LoadBalancer Service; ports default to TCP 80, a bare number means TCP. */
export function lbService(
  name: string,
  opts: { annotations?: Record<string, string>; etp?: 'Local' | 'Cluster'; ports?: PortSpec[] } = {},
): V1Service {
  return {
    metadata: { name, annotations: { ...opts.annotations }, labels: { app: name } },
    spec: {
      type: 'LoadBalancer',
      externalTrafficPolicy: opts.etp ?? 'Cluster',
      selector: { app: name },
      ports: (opts.ports ?? [80]).map((p) => {
        const [port, protocol] = typeof p === 'number' ? [p, 'TCP' as const] : p;
        return { name: `p${port}-${protocol.toLowerCase()}`, port, protocol, targetPort: port };
      }),
    },
  };
}

/** Private CLB, externalTrafficPolicy Local, a TCP and a UDP listener: in IPVS mode both listeners are at risk. */
export const AT_RISK_L4 = { annotations: { ...PRIVATE_SUBNET }, etp: 'Local' as const, ports: [[80, 'TCP'], [53, 'UDP']] as PortSpec[] };

/** Makes TKE's l7-lb-controller take an Ingress. */
export const QCLOUD_INGRESS: Readonly<Record<string, string>> = { 'kubernetes.io/ingress.class': 'qcloud' };
/** A qcloud Ingress on a private (INTERNAL) CLB in this subnet. */
export const PRIVATE_INGRESS: Readonly<Record<string, string>> = { ...QCLOUD_INGRESS, 'kubernetes.io/ingress.subnetId': 'subnet-demo0001' };

export interface IngressRuleSpec {
  /** Absent: a rule on the CLB's VIP domain. */
  host?: string;
  /** A bare string is a Prefix path. */
  paths: Array<string | { path: string; pathType: 'Prefix' | 'Exact' }>;
}

/**
 * An Ingress whose every path goes to one backend Service (default `backend:80`). The annotations are taken as
 * given: spread PRIVATE_INGRESS or QCLOUD_INGRESS for TKE to build a CLB. `tls` lists the hosts of one
 * certificate Secret, `cert`.
 */
export function lbIngress(
  name: string,
  opts: { annotations?: Record<string, string>; rules: IngressRuleSpec[]; tls?: string[]; backend?: { name: string; port: number } },
): V1Ingress {
  const service = { name: opts.backend?.name ?? 'backend', port: { number: opts.backend?.port ?? 80 } };
  return {
    metadata: { name, annotations: { ...opts.annotations } },
    spec: {
      ...(opts.tls ? { tls: [{ hosts: opts.tls, secretName: 'cert' }] } : {}),
      rules: opts.rules.map((r) => ({
        ...(r.host ? { host: r.host } : {}),
        http: {
          paths: r.paths.map((p) => {
            const { path, pathType } = typeof p === 'string' ? { path: p, pathType: 'Prefix' as const } : p;
            return { path, pathType, backend: { service } };
          }),
        },
      })),
    },
  };
}
