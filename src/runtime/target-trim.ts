// What the Service and Ingress caches keep: the fields model/target-facts.ts reads (their only reader; routing reads
// the namespace), plus the resourceVersion the informer resumes its watch from. The caches hold every Service and
// Ingress of the cluster, and the rest of them is read by nobody. Trimmed in place: the informer's cache holds these
// very objects (informer.ts, slim). `kubectl.kubernetes.io/last-applied-configuration` goes too: a copy of the whole
// object on every target applied with kubectl, and no annotation loopguard reads (api/annotations.ts names each).
// test/unit/target-trim.test.ts checks that the facts of a trimmed object equal those of the whole one.
import type { V1Ingress, V1ObjectMeta, V1Service } from '@kubernetes/client-node';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Obj = Record<string, unknown>;

/**
 * `o`'s defined fields but `drop`, then `extra`'s, in a new plain object. What the caches keep is rebuilt this way,
 * never edited with `delete`: deleting a field turns a V8 object into a hash table (dictionary mode) that keeps its
 * size, and client-node's deserializer sets every field of a V1ObjectMeta, most of them undefined (issue 40).
 */
export function definedOf<O extends object>(o: O, extra: Partial<O> = {}, drop: readonly (keyof O)[] = []): O {
  const out: Partial<O> = {};
  for (const k of Object.keys(o) as (keyof O)[]) if (o[k] !== undefined && !drop.includes(k)) out[k] = o[k];
  return Object.assign(out, extra) as O;
}

/** `o` with only `keys`, those set; undefined stays undefined. */
function pick<T extends object>(o: T | undefined, keys: readonly (keyof T)[]): T | undefined {
  if (!o) return undefined;
  const out: Obj = {};
  for (const k of keys) if (o[k] !== undefined) out[k as string] = o[k];
  return out as T;
}

/** Rebuilt, never edited with `delete`: see definedOf. */
function trimMetadata(o: { metadata?: V1ObjectMeta }): void {
  const md = o.metadata;
  if (!md) return;
  const drop: (keyof V1ObjectMeta)[] = ['generateName', 'selfLink', 'ownerReferences', 'finalizers', 'generation'];
  let annotations = md.annotations;
  if (annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _, ...rest } = annotations;
    annotations = rest;
  }
  o.metadata = definedOf(md, annotations ? { annotations } : {}, drop);
}

/** Of the status, status.loadBalancer.ingress's ip and ipMode only: the published addresses (hostname is not read). */
function trimStatus(o: { status?: { loadBalancer?: { ingress?: { ip?: string; ipMode?: string }[] } } }): void {
  const ingress = o.status?.loadBalancer?.ingress;
  // Unset, not deleted: the object stays out of V8's dictionary mode (definedOf).
  o.status = ingress && ingress.length > 0 ? { loadBalancer: { ingress: ingress.map((i) => pick(i, ['ip', 'ipMode']) ?? {}) } } : undefined;
}

export function trimService(svc: V1Service): V1Service {
  trimMetadata(svc);
  const spec = svc.spec;
  if (spec) {
    const kept = pick(spec, ['type', 'loadBalancerClass', 'externalTrafficPolicy']) ?? {};
    // Only whether it is headless is read (l7.inClusterDNS never rewrites to a headless Service): the address goes.
    if (spec.clusterIP === 'None') kept.clusterIP = 'None';
    if (spec.ports) kept.ports = spec.ports.map((p) => pick(p, ['name', 'port', 'protocol']) as typeof p);
    svc.spec = kept;
  }
  trimStatus(svc);
  return svc;
}

export function trimIngress(ing: V1Ingress): V1Ingress {
  trimMetadata(ing);
  const spec = ing.spec;
  if (spec) {
    const kept = pick(spec, ['ingressClassName']) ?? {};
    const backendName = (b: { service?: { name?: string } } | undefined) => (b?.service?.name ? { service: { name: b.service.name } } : undefined);
    const backendWithPort = (b: { service?: { name?: string; port?: { name?: string; number?: number } } } | undefined) =>
      b?.service?.name ? { service: { name: b.service.name, ...(b.service.port ? { port: pick(b.service.port, ['name', 'number']) } : {}) } } : undefined;
    if (spec.rules) {
      kept.rules = spec.rules.map((r) => ({
        ...(r.host ? { host: r.host } : {}),
        // A path's backend keeps its Service port too (number or name): l7.inClusterDNS needs port 80.
        ...(r.http ? { http: { paths: r.http.paths.map((p) => ({ ...(p.path !== undefined ? { path: p.path } : {}), backend: backendWithPort(p.backend) ?? {} }) as typeof p) } } : {}),
      }));
    }
    // Only whether there is TLS is read: the entries stay, their hosts and secrets go.
    if (spec.tls) kept.tls = spec.tls.map(() => ({}));
    const def = backendName(spec.defaultBackend);
    if (def) kept.defaultBackend = def as typeof spec.defaultBackend;
    ing.spec = kept;
  }
  trimStatus(ing);
  return ing;
}

/** A Gateway: its metadata (as a Service's), class, own EnvoyProxy's reference and listeners' hostnames; the rest of the listeners, addresses and status are not read. */
export function trimGateway<G extends { metadata?: V1ObjectMeta; spec?: { gatewayClassName?: string; infrastructure?: { parametersRef?: unknown }; listeners?: { hostname?: string }[] }; status?: unknown }>(gw: G): G {
  trimMetadata(gw);
  const ref = gw.spec?.infrastructure?.parametersRef;
  // The listeners' hostnames only: the names l7.inClusterDNS may rewrite (docs/dns.md).
  const hostnames = (gw.spec?.listeners ?? []).flatMap((l) => (l.hostname ? [{ hostname: l.hostname }] : []));
  gw.spec = { ...pick(gw.spec, ['gatewayClassName']), ...(ref ? { infrastructure: { parametersRef: ref } } : {}), ...(hostnames.length > 0 ? { listeners: hostnames } : {}) };
  gw.status = undefined;
  return gw;
}

/** An EnvoyProxy: its provider's type and envoyService.annotations (what loopguard reads and writes), nothing else. */
export function trimEnvoyProxy<E extends { metadata?: V1ObjectMeta; spec?: { provider?: { type?: string; kubernetes?: { envoyService?: { annotations?: Record<string, string> } } } }; status?: unknown }>(ep: E): E {
  trimMetadata(ep);
  const p = ep.spec?.provider;
  const annotations = p?.kubernetes?.envoyService?.annotations;
  ep.spec = { ...(p ? { provider: { ...(p.type ? { type: p.type } : {}), ...(annotations ? { kubernetes: { envoyService: { annotations } } } : {}) } } : {}) };
  ep.status = undefined;
  return ep;
}

/** A GatewayClass: its name and parametersRef (the EnvoyProxy it names). */
export function trimGatewayClass<C extends { metadata?: V1ObjectMeta; spec?: { parametersRef?: unknown }; status?: unknown }>(c: C): C {
  trimMetadata(c);
  const ref = c.spec?.parametersRef;
  c.spec = ref ? { parametersRef: ref } : {};
  c.status = undefined;
  return c;
}
