import type { HealthCheckPatch, NodeSpec, SeedListener, SeedLoadBalancer, SeedRule } from './admin-types.js';
import { accountSourceIpType } from './capabilities.js';
import type { EmulatorCore } from './emulator.js';
import { ApiError, ipv6NotInternal, ipv6PassToTarget, ipv6Source100_64 } from './errors.js';
import { buildListener, buildLoadBalancer, buildRule, portsClash } from './factories.js';
import type { HealthCheckContext } from './health-check.js';
import { applyHealthCheck, defaultHealthCheck } from './health-check.js';
import type { HealthCheckState, ListenerRecord, LoadBalancerRecord, NodeRecord } from './model.js';
import { isLayer7, LISTENER_PROTOCOLS, primaryVip } from './model.js';
import { isRecord } from './params.js';

/**
 * Synchronous admin-side construction and drift (no tasks, locks or capability checks: the admin plays the
 * console user or TKE's own controller). Range validation still applies so seeded state is always state the real
 * API could hold. Failures are `AdminError`s (HTTP 4xx).
 */

export class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function bad(message: string): AdminError {
  return new AdminError(400, message);
}

/** Not a type guard on purpose: callers keep their declared spec type after the runtime check. */
function assertObject(value: unknown, label: string): void {
  if (!isRecord(value)) throw bad(`${label} must be an object`);
}

/** The API's refusal as a 400. */
function refused(err: ApiError): AdminError {
  return bad(`${err.code}: ${err.message}`);
}

/** Runs an API-style validator and turns its ApiError into a 400. */
function validated<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ApiError) throw refused(err);
    throw err;
  }
}

/** JSON nulls mean "not set" (the SDK strips them too). */
function withoutNulls(patch: HealthCheckPatch): Record<string, unknown> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null && v !== undefined));
}

/**
 * A seeded or drifted health check. The IPv6 rule is a property of the CLB, not of the account, so unlike the
 * capability checks it holds for the admin too: no console user can give an IPv6 CLB the 100.64 source either.
 */
function healthCheckFrom(
  patch: HealthCheckPatch | undefined,
  ctx: HealthCheckContext,
  base: HealthCheckState,
  label: string,
  lbId: string,
): HealthCheckState {
  if (patch === undefined) return base;
  assertObject(patch, label);
  return validated(() => {
    const next = applyHealthCheck(withoutNulls(patch), ctx, base, label);
    if (ctx.ipv6 && next.SourceIpType === 1) throw ipv6Source100_64(lbId);
    return next;
  });
}

export function nodesFrom(specs: unknown): NodeRecord[] {
  if (!Array.isArray(specs)) throw bad('nodes must be an array');
  return specs.map((s: unknown, i): NodeRecord => {
    const spec: NodeSpec | undefined = typeof s === 'string' ? { ip: s } : isRecord(s) ? (s as unknown as NodeSpec) : undefined;
    if (!spec || typeof spec.ip !== 'string' || spec.ip === '') throw bad(`nodes[${i}] must be an IP string or {ip, instanceId?, vipBound?}`);
    return {
      ip: spec.ip,
      instanceId: spec.instanceId ?? `ins-${spec.ip.replace(/[.:]/g, '').slice(-8).padStart(8, '0')}`,
      vipBound: spec.vipBound === true,
    };
  });
}

function seedRule(lb: LoadBalancerRecord, listener: ListenerRecord, spec: SeedRule, label: string, nowMs: number, defaultSource: 0 | 1) {
  assertObject(spec, label);
  if (typeof spec.Url !== 'string' || !spec.Url.startsWith('/')) throw bad(`${label}.Url must be a path starting with "/"`);
  const forwardType = spec.ForwardType ?? 'HTTP';
  const ctx = { protocol: listener.Protocol, forwardType, ipv6: lb.AddressIPVersion === 'ipv6', defaultSourceIpType: defaultSource };
  const domain = spec.Domain ?? primaryVip(lb);
  if (listener.Rules.some((r) => r.Domain === domain && r.Url === spec.Url)) throw bad(`${label}: duplicate rule ${domain}${spec.Url}`);
  return buildRule(
    { id: spec.LocationId, domain, url: spec.Url, forwardType, healthCheck: healthCheckFrom(spec.HealthCheck, ctx, defaultHealthCheck(ctx), `${label}.HealthCheck`, lb.LoadBalancerId) },
    nowMs,
  );
}

function seedListener(lb: LoadBalancerRecord, spec: SeedListener, label: string, nowMs: number, defaultSource: 0 | 1): ListenerRecord {
  assertObject(spec, label);
  if (!LISTENER_PROTOCOLS.includes(spec.Protocol)) throw bad(`${label}.Protocol must be one of ${LISTENER_PROTOCOLS.join('|')}`);
  if (!Number.isInteger(spec.Port) || spec.Port < 1 || spec.Port > 65535) throw bad(`${label}.Port must be 1–65535`);
  if (lb.Listeners.some((l) => l.Port === spec.Port && portsClash(l.Protocol, spec.Protocol))) throw bad(`${label}: port ${spec.Port} already used`);
  const l7 = isLayer7(spec.Protocol);
  if (l7 && spec.HealthCheck) throw bad(`${label}.HealthCheck: layer-7 health checks are per rule`);
  if (!l7 && spec.Rules) throw bad(`${label}.Rules: only HTTP/HTTPS listeners have rules`);
  if (spec.KeepaliveEnable !== undefined && (!l7 || (spec.KeepaliveEnable !== 0 && spec.KeepaliveEnable !== 1))) {
    throw bad(`${label}.KeepaliveEnable must be 0/1 on an HTTP/HTTPS listener`);
  }
  const ctx = { protocol: spec.Protocol, ipv6: lb.AddressIPVersion === 'ipv6', defaultSourceIpType: defaultSource };
  const listener = buildListener(
    {
      id: spec.ListenerId,
      name: spec.ListenerName,
      protocol: spec.Protocol,
      port: spec.Port,
      healthCheck: l7 ? null : healthCheckFrom(spec.HealthCheck, ctx, defaultHealthCheck(ctx), `${label}.HealthCheck`, lb.LoadBalancerId),
      keepalive: spec.KeepaliveEnable,
      snat: spec.SnatEnable,
    },
    nowMs,
  );
  if (spec.Rules !== undefined && !Array.isArray(spec.Rules)) throw bad(`${label}.Rules must be an array`);
  (spec.Rules ?? []).forEach((r, i) => listener.Rules.push(seedRule(lb, listener, r, `${label}.Rules[${i}]`, nowMs, defaultSource)));
  return listener;
}

export function seedLoadBalancer(core: EmulatorCore, spec: SeedLoadBalancer): LoadBalancerRecord {
  assertObject(spec, 'body (load-balancer spec)');
  if (spec.LoadBalancerId !== undefined && core.store.has(spec.LoadBalancerId)) {
    throw new AdminError(409, `load balancer ${spec.LoadBalancerId} already exists`);
  }
  const ipVersion = spec.AddressIPVersion ?? 'IPV4';
  if (!['IPV4', 'IPV6', 'IPv6FullChain'].includes(ipVersion)) throw bad('AddressIPVersion must be IPV4, IPV6 or IPv6FullChain');
  // IPv6 CLBs are public-only (tencent-cloud.md §9 #4): an IPv6 seed defaults to OPEN, and INTERNAL is refused like
  // CreateLoadBalancer refuses it, so no test can build a CLB the real API could not hold.
  const ipv6 = ipVersion !== 'IPV4';
  const type = spec.LoadBalancerType ?? (ipv6 ? 'OPEN' : 'INTERNAL');
  if (type !== 'OPEN' && type !== 'INTERNAL') throw bad('LoadBalancerType must be OPEN or INTERNAL');
  if (ipv6 && type === 'INTERNAL') throw refused(ipv6NotInternal(ipVersion));
  if (ipv6 && spec.LoadBalancerPassToTarget) throw refused(ipv6PassToTarget(spec.LoadBalancerId ?? '(new)'));
  const nowMs = Date.now();
  const nodes = spec.nodes === undefined ? undefined : nodesFrom(spec.nodes);
  const lb = buildLoadBalancer(
    core.store,
    {
      id: spec.LoadBalancerId,
      name: spec.LoadBalancerName,
      type,
      ipVersion,
      vip: spec.Vip,
      addressIPv6: spec.AddressIPv6,
      vpcId: spec.VpcId,
      subnetId: spec.SubnetId ?? (type === 'INTERNAL' ? 'subnet-loopguard' : ''),
      tags: spec.Tags,
      clusterIds: spec.ClusterIds,
      passToTarget: spec.LoadBalancerPassToTarget,
      deleteProtect: spec.DeleteProtect,
      status: 1,
      nodes,
    },
    nowMs,
  );
  if (spec.vipBound !== undefined) lb.nodes.forEach((n) => (n.vipBound = spec.vipBound === true));
  if (spec.Listeners !== undefined && !Array.isArray(spec.Listeners)) throw bad('Listeners must be an array');
  // A seeded CLB is one this account created: checks the seed leaves unset get the account's default source.
  const defaultSource = accountSourceIpType(core.capabilities);
  (spec.Listeners ?? []).forEach((l, i) => lb.Listeners.push(seedListener(lb, l, `Listeners[${i}]`, nowMs, defaultSource)));
  core.store.add(lb);
  return lb;
}

export { healthCheckFrom };
