// Making the CLB, its listeners and its rules exist as planned, and removing what TKE created when the
// Service/Ingress goes. TKE tags the CLBs it creates (`tke-createdBy-flag = yes`, `tke-clusterId`, tencent-cloud.md §2)
// and deletes only those; a CLB named by `tke-existed-lbid` is the user's and survives.
import type { Listener, LoadBalancer, RuleInput } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { TAG_CLUSTER_ID, TAG_CREATED_BY, TAG_INGRESS_UUID, TAG_SERVICE_UUID } from './annotations.js';
import { ClbError, isNotFound } from './clb-api.js';
import type { SimulatorContext } from './context.js';
import type { L7ListenerPlan } from './ingress-plan.js';
import type { L4ListenerPlan, LoadBalancerPlan } from './service-plan.js';
import { isIpv6 } from './service-plan.js';

export interface ClbHandle {
  id: string;
  /** IPv4 VIP, or the IPv6 address of an IPv6 CLB (what kube-proxy binds and status reports). */
  vip: string;
  ipv6: boolean;
  /** Created by this cluster's TKE: we may delete it and every listener on it. */
  owned: boolean;
  /** `LoadBalancerPassToTarget` as last described ("allow traffic from CLB by default"). */
  passToTarget: boolean;
}

/** A Service/Ingress-level problem TKE reports as a Warning Event (e.g. a missing `tke-existed-lbid`). */
export class SyncError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'SyncError';
  }
}

/**
 * Deletes a listener or rules. The emulator may not speak DeleteListener/DeleteRule (it answers `InvalidAction`);
 * then the leftover is logged and kept, instead of failing every reconcile.
 */
async function removeIfSupported(ctx: SimulatorContext, what: string, remove: () => Promise<void>): Promise<boolean> {
  try {
    await remove();
    return true;
  } catch (err) {
    if (err instanceof ClbError && err.code === 'InvalidAction') {
      ctx.log(`${what} kept: the CLB API does not support ${err.action}`);
      return false;
    }
    throw err;
  }
}

export function vipOf(lb: LoadBalancer): string {
  return lb.LoadBalancerVips?.[0] ?? lb.AddressIPv6 ?? '';
}

export function createdByCluster(lb: LoadBalancer, clusterId: string): boolean {
  const tag = (key: string): string | undefined => lb.Tags?.find((t) => t.TagKey === key)?.TagValue;
  return tag(TAG_CREATED_BY) === 'yes' && tag(TAG_CLUSTER_ID) === clusterId;
}

/** A CLB TKE made for another object: it carries an owner tag that is not `ownerTag`. */
function madeForAnother(lb: LoadBalancer, ownerTag: LoadBalancerPlan['ownerTag']): boolean {
  return (lb.Tags ?? []).some((t) => (t.TagKey === TAG_SERVICE_UUID || t.TagKey === TAG_INGRESS_UUID) && (t.TagKey !== ownerTag?.key || t.TagValue !== ownerTag?.value));
}

function handleOf(lb: LoadBalancer, owned: boolean): ClbHandle {
  const ipv6 = (lb.AddressIPVersion ?? 'ipv4').toLowerCase() !== 'ipv4' && !lb.LoadBalancerVips?.length;
  return { id: lb.LoadBalancerId ?? '', vip: vipOf(lb), ipv6, owned, passToTarget: lb.LoadBalancerPassToTarget === true };
}

export async function describeOrUndefined(ctx: SimulatorContext, id: string): Promise<LoadBalancer | undefined> {
  try {
    return await ctx.clb.describeLoadBalancer(id);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * The CLB for a plan: the user's (`existingId`), the one recorded on the object, or a new one. A recorded CLB
 * that vanished is re-created, as TKE does for a CLB deleted behind its back. Network type / IP version
 * changes after creation are not applied (sim/README.md).
 */
export async function ensureLoadBalancer(
  ctx: SimulatorContext,
  plan: LoadBalancerPlan,
  recordedId: string | undefined,
  record: (id: string) => Promise<void>,
): Promise<ClbHandle> {
  if (plan.existingId) {
    const lb = await describeOrUndefined(ctx, plan.existingId);
    if (!lb) throw new SyncError('SyncLoadBalancerFailed', `the existing CLB ${plan.existingId} (tke-existed-lbid) does not exist`);
    return handleOf(lb, false);
  }
  if (recordedId) {
    const lb = await describeOrUndefined(ctx, recordedId);
    if (lb && !madeForAnother(lb, plan.ownerTag)) return handleOf(lb, createdByCluster(lb, ctx.clusterId));
    if (!lb) ctx.log(`CLB ${recordedId} is gone; creating a new one`);
    else if (plan.ownerTag) {
      // The read-only id annotation was edited to another object's CLB: TKE keeps its own binding (the doc's
      // LoadBalancerResource), so it goes on with the CLB tagged for this object and writes the id back.
      ctx.log(`CLB ${recordedId} named on the object was made for another object; keeping this object's own CLB`);
      const own = (await ctx.clb.describeLoadBalancersByTag(plan.ownerTag.key, plan.ownerTag.value))[0];
      if (own) return handleOf(own, createdByCluster(own, ctx.clusterId));
    }
  }
  const id = await ctx.clb.createLoadBalancer(
    {
      LoadBalancerType: plan.type,
      LoadBalancerName: plan.name,
      VpcId: ctx.vpcId,
      ...(plan.subnetId ? { SubnetId: plan.subnetId } : {}),
      ...(plan.addressIpVersion !== 'IPV4' ? { AddressIPVersion: plan.addressIpVersion } : {}),
      ...(plan.vip !== undefined ? { Vip: plan.vip } : {}),
      Tags: [
        { TagKey: TAG_CREATED_BY, TagValue: 'yes' },
        { TagKey: TAG_CLUSTER_ID, TagValue: ctx.clusterId },
        ...(plan.ownerTag ? [{ TagKey: plan.ownerTag.key, TagValue: plan.ownerTag.value }] : []),
      ],
    },
    record,
  );
  const lb = await ctx.clb.describeLoadBalancer(id);
  if (!lb) throw new ClbError('DescribeLoadBalancers', 'InternalError', `CLB ${id} not found right after creation`, '');
  return { ...handleOf(lb, true), ipv6: isIpv6(plan.addressIpVersion) };
}

export const sameL4 = (d: L4ListenerPlan, l: Listener): boolean => l.Protocol === d.protocol && l.Port === d.port;

/**
 * One TCP/UDP listener per planned port, health check on. TKE names a source only when it wants 100.64
 * (`wantSource100_64`: newer TKE with prevent-loopback, never on IPv6); otherwise it leaves `SourceIpType` out
 * and CLB gives the account's default (tencent-cloud.md §9 #3). Listeners we created and no longer need are deleted;
 * on a user's CLB "ours" means named with `namePrefix`.
 */
export async function ensureL4Listeners(
  ctx: SimulatorContext,
  lb: ClbHandle,
  desired: L4ListenerPlan[],
  wantSource100_64: boolean,
  namePrefix: string,
): Promise<Listener[]> {
  const actual = await ctx.clb.describeListeners(lb.id);
  let changed = false;
  for (const d of desired) {
    if (actual.some((l) => sameL4(d, l))) continue;
    await ctx.clb.createListener({
      LoadBalancerId: lb.id,
      Ports: [d.port],
      Protocol: d.protocol,
      ListenerNames: [`${namePrefix}${d.protocol}-${d.port}`],
      HealthCheck: { HealthSwitch: 1, ...(wantSource100_64 && !lb.ipv6 ? { SourceIpType: 1 } : {}) },
    });
    changed = true;
  }
  for (const l of actual) {
    if (l.Protocol !== 'TCP' && l.Protocol !== 'UDP') continue;
    if (desired.some((d) => sameL4(d, l)) || !isOurs(lb, l, namePrefix)) continue;
    if (await removeIfSupported(ctx, `listener ${l.ListenerId}`, () => ctx.clb.deleteListener(lb.id, l.ListenerId ?? ''))) changed = true;
  }
  return changed ? ctx.clb.describeListeners(lb.id) : actual;
}

export const isOurs = (lb: ClbHandle, l: Listener, namePrefix: string): boolean =>
  lb.owned || (l.ListenerName ?? '').startsWith(namePrefix);

/**
 * The rule health check TKE's ingress controller sets, as seen in a config it generated (tencent-cloud.md §1 live
 * export: enable, 5 s interval, 5 s timeout, 3/3, httpCode 31, HEAD /). The export's `sourceIpType: 0` mirrors
 * that account's CLB; like the service-controller, TKE names no source here, so CLB gives the account's
 * default (0 for legacy accounts, 100.64 for accounts new since 2023-02-24, §9 #3).
 */
export function defaultRuleHealthCheck(host: string | undefined): NonNullable<RuleInput['HealthCheck']> {
  return {
    HealthSwitch: 1,
    IntervalTime: 5,
    TimeOut: 5,
    HealthNum: 3,
    UnHealthNum: 3,
    HttpCode: 31,
    HttpCheckPath: '/',
    HttpCheckMethod: 'HEAD',
    ...(host ? { HttpCheckDomain: host } : {}),
  };
}

/** HTTP/HTTPS listeners with one rule per planned host/path (Domain = host, or the VIP without one). */
export async function ensureL7Listeners(
  ctx: SimulatorContext,
  lb: ClbHandle,
  desired: L7ListenerPlan[],
  namePrefix: string,
): Promise<Listener[]> {
  let actual = await ctx.clb.describeListeners(lb.id);
  let changed = false;
  const find = (d: L7ListenerPlan): Listener | undefined => actual.find((l) => l.Protocol === d.protocol && l.Port === d.port);
  for (const d of desired) {
    if (find(d)) continue;
    await ctx.clb.createListener({
      LoadBalancerId: lb.id,
      Ports: [d.port],
      Protocol: d.protocol,
      ListenerNames: [`${namePrefix}${d.protocol}-${d.port}`],
      // Certificates are not modelled; the emulator accepts HTTPS listeners without one (sim/README.md).
    });
    changed = true;
  }
  if (changed) actual = await ctx.clb.describeListeners(lb.id);
  for (const d of desired) {
    const listener = find(d);
    if (!listener?.ListenerId) continue;
    const domainOf = (host: string | undefined): string => host ?? lb.vip;
    const missing: RuleInput[] = d.rules
      .filter((r) => !(listener.Rules ?? []).some((x) => x.Domain === domainOf(r.host) && x.Url === r.url))
      .map((r) => ({ Domain: domainOf(r.host), Url: r.url, HealthCheck: defaultRuleHealthCheck(r.host) }));
    if (missing.length > 0) {
      await ctx.clb.createRule({ LoadBalancerId: lb.id, ListenerId: listener.ListenerId, Rules: missing });
      changed = true;
    }
    const extra = (listener.Rules ?? []).filter((x) => !d.rules.some((r) => x.Domain === domainOf(r.host) && x.Url === r.url));
    if (extra.length > 0 && isOurs(lb, listener, namePrefix)) {
      const ids = extra.map((x) => x.LocationId ?? '');
      const listenerId = listener.ListenerId;
      if (await removeIfSupported(ctx, `rules ${ids.join(',')}`, () => ctx.clb.deleteRules(lb.id, listenerId, ids))) changed = true;
    }
  }
  for (const l of actual) {
    if (l.Protocol !== 'HTTP' && l.Protocol !== 'HTTPS') continue;
    if (desired.some((d) => d.protocol === l.Protocol && d.port === l.Port) || !isOurs(lb, l, namePrefix)) continue;
    if (await removeIfSupported(ctx, `listener ${l.ListenerId}`, () => ctx.clb.deleteListener(lb.id, l.ListenerId ?? ''))) changed = true;
  }
  return changed ? ctx.clb.describeListeners(lb.id) : actual;
}

/**
 * Undoes what TKE built: unbinds the VIP, deletes the CLB if this cluster created it (and the user did not name
 * it in `tke-existed-lbid`), otherwise only the listeners named with `namePrefix`. A CLB already gone is fine.
 */
export async function releaseLoadBalancer(
  ctx: SimulatorContext,
  id: string,
  namePrefix: string,
  userOwned: boolean,
): Promise<void> {
  const lb = await describeOrUndefined(ctx, id);
  if (!lb) return;
  await ctx.vips.setVipBound(id, false);
  if (!userOwned && createdByCluster(lb, ctx.clusterId)) {
    await ctx.clb.deleteLoadBalancer(id);
    return;
  }
  const handle = handleOf(lb, false);
  for (const l of await ctx.clb.describeListeners(id)) {
    if (!isOurs(handle, l, namePrefix)) continue;
    await removeIfSupported(ctx, `listener ${l.ListenerId}`, () => ctx.clb.deleteListener(id, l.ListenerId ?? ''));
  }
}
