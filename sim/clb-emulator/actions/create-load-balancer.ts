import { ApiError, ipv6NotInternal, missingParameter } from '../errors.js';
import type { IpVersionInput } from '../factories.js';
import { buildLoadBalancer } from '../factories.js';
import type { TagInfo } from '../model.js';
import { allowOnly, isRecord, optArray, optBool, optEnum, optInt, optIntInRange, optString, optStringArray } from '../params.js';
import { liveLb, startTask } from './guards.js';
import type { ActionDefinition } from './types.js';

/**
 * CreateLoadBalancer (async, tencent-cloud.md §3). The CLB is listed at once with `Status` 0 ("creating") and its lock
 * held; when the task completes it becomes `Status` 1. A failed task removes it again. INTERNAL CLBs need a
 * SubnetId (the TKE annotation path, tencent-cloud.md §2) and are IPv4 (§9 #4). VIPs are in-memory strings only (state.ts).
 */
const ALLOWED = [
  'LoadBalancerType', 'Forward', 'LoadBalancerName', 'VpcId', 'SubnetId', 'ProjectId', 'AddressIPVersion', 'Number',
  'Tags', 'Vip', 'ClusterIds', 'LoadBalancerPassToTarget', 'SnatPro',
];

function readIpVersion(raw: string | undefined): IpVersionInput {
  if (raw === undefined) return 'IPV4';
  const upper = raw.toUpperCase();
  if (upper === 'IPV4') return 'IPV4';
  if (upper === 'IPV6') return 'IPV6';
  if (upper === 'IPV6FULLCHAIN') return 'IPv6FullChain';
  throw new ApiError('InvalidParameterValue', `AddressIPVersion \`${raw}\` is invalid; expected IPV4, IPV6 or IPv6FullChain.`);
}

function readTags(raw: unknown[] | undefined): TagInfo[] {
  return (raw ?? []).map((t, i) => {
    if (!isRecord(t) || typeof t['TagKey'] !== 'string' || typeof t['TagValue'] !== 'string') {
      throw new ApiError('InvalidParameter.FormatError', `Tags.${i} must be {TagKey: string, TagValue: string}.`);
    }
    return { TagKey: t['TagKey'], TagValue: t['TagValue'] };
  });
}

export const createLoadBalancer: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ALLOWED);
    const { core } = ctx;
    const type = optEnum(params, 'LoadBalancerType', ['OPEN', 'INTERNAL']);
    if (!type) throw missingParameter('LoadBalancerType');
    const forward = optInt(params, 'Forward');
    if (forward !== undefined && forward !== 1) throw new ApiError('InvalidParameterValue', 'Forward only supports 1.');
    const name = optString(params, 'LoadBalancerName');
    if (name !== undefined && (name.length < 1 || name.length > 80)) {
      throw new ApiError('InvalidParameterValue.Length', 'LoadBalancerName must be 1–80 characters.');
    }
    const vpcId = optString(params, 'VpcId');
    const subnetId = optString(params, 'SubnetId');
    if (type === 'INTERNAL' && !subnetId) throw missingParameter('SubnetId');
    const projectId = optInt(params, 'ProjectId');
    if (projectId !== undefined && projectId !== 0) throw new ApiError('InvalidParameterValue', 'Only ProjectId 0 exists.');
    const ipVersion = readIpVersion(optString(params, 'AddressIPVersion'));
    if (ipVersion !== 'IPV4' && type === 'INTERNAL') throw ipv6NotInternal(ipVersion);
    const number = optIntInRange(params, 'Number', 1, 20) ?? 1;
    const tags = readTags(optArray(params, 'Tags', 20));
    const vip = optString(params, 'Vip');
    if (vip !== undefined) {
      if (number !== 1 || ipVersion !== 'IPV4') throw new ApiError('InvalidParameterCombination', 'Vip requires Number=1 and an IPv4 CLB.');
      if (core.store.all().some((lb) => lb.LoadBalancerVips.includes(vip))) {
        throw new ApiError('InvalidParameterValue.Duplicate', `Vip ${vip} is already in use.`);
      }
    }
    const clusterIds = optStringArray(params, 'ClusterIds', 20);
    const passToTarget = optBool(params, 'LoadBalancerPassToTarget');
    if (passToTarget !== undefined && ipVersion !== 'IPV4') {
      throw new ApiError('InvalidParameterValue', 'LoadBalancerPassToTarget is not supported by IPv6 load balancers.');
    }
    const snatPro = optBool(params, 'SnatPro');

    const ids: string[] = [];
    for (let i = 0; i < number; i++) {
      const lb = buildLoadBalancer(
        core.store,
        { name, type, ipVersion, vip, vpcId, subnetId, tags, clusterIds, passToTarget, snatPro, status: 0 },
        ctx.nowMs,
      );
      core.store.add(lb);
      ids.push(lb.LoadBalancerId);
    }
    startTask(
      ctx,
      'CreateLoadBalancer',
      ids,
      () => ids.forEach((id) => (liveLb(core, id).Status = 1)),
      () => ids.forEach((id) => core.store.remove(id)),
    );
    return { LoadBalancerIds: ids };
  },
};
