// Sample targets for end-to-end suites and benchmarks: LoadBalancer Services as TKE users write them.
import type { V1Service } from '@kubernetes/client-node';

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
