// Cluster profiles: which kube-proxy the simulated TKE cluster runs (fixtures in sim/profiles/*.yaml, one
// `kube-system/kube-proxy` DaemonSet each). `none` removes the DaemonSet (DataPlaneV2 / binary kube-proxy).
import { readFileSync } from 'node:fs';
import type { KubeConfig, V1DaemonSet } from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { httpStatus } from './kube-api.js';

export const CLUSTER_PROFILES = ['ipvs-new', 'ipvs-old', 'iptables', 'ipvs-1.28', 'none'] as const;
export type ClusterProfileName = (typeof CLUSTER_PROFILES)[number];

export function isClusterProfileName(name: string): name is ClusterProfileName {
  return (CLUSTER_PROFILES as readonly string[]).includes(name);
}

/** The profile's DaemonSet, read from its fixture; undefined for `none`. */
export function clusterProfile(name: ClusterProfileName): V1DaemonSet | undefined {
  if (name === 'none') return undefined;
  const file = new URL(`../profiles/${name}.yaml`, import.meta.url);
  return parse(readFileSync(file, 'utf8')) as V1DaemonSet;
}

async function ignoring<T>(status: number, p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (httpStatus(err) === status) return undefined;
    throw err;
  }
}

/** Creates or replaces `kube-system/kube-proxy` to match the profile (creating `kube-system` if missing). */
export async function applyClusterProfile(kc: KubeConfig, name: ClusterProfileName): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const namespace = 'kube-system';
  const desired = clusterProfile(name);
  if (!desired) {
    await ignoring(404, apps.deleteNamespacedDaemonSet({ namespace, name: 'kube-proxy' }));
    return;
  }
  await ignoring(409, core.createNamespace({ body: { metadata: { name: namespace } } }));
  for (let attempt = 0; ; attempt++) {
    const current = await ignoring(404, apps.readNamespacedDaemonSet({ namespace, name: 'kube-proxy' }));
    try {
      if (!current) {
        await apps.createNamespacedDaemonSet({ namespace, body: desired });
      } else {
        const body = { ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion } };
        await apps.replaceNamespacedDaemonSet({ namespace, name: 'kube-proxy', body });
      }
      return;
    } catch (err) {
      // Someone else (another suite) changed it between our read and write: read again.
      if ((httpStatus(err) === 409 || httpStatus(err) === 404) && attempt < 5) continue;
      throw err;
    }
  }
}
