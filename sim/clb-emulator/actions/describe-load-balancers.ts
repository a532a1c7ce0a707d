import { ApiError } from '../errors.js';
import type { LoadBalancerRecord } from '../model.js';
import type { Params } from '../params.js';
import {
  allowOnly, isRecord, optArray, optEnum, optInt, optIntInRange, optString, optStringArray, optSwitch,
} from '../params.js';
import { renderLoadBalancer } from '../render.js';
import type { ActionDefinition } from './types.js';

/**
 * DescribeLoadBalancers (tencent-cloud.md §3): LoadBalancerIds ≤ 20, Limit ≤ 100 (default 20), VIP filter, default order
 * CreateTime descending. Unknown ids are simply not returned (no error), as the real API does for a search.
 * Over-long id lists are `InvalidParameterValue.Length` (listed for this API in tencent-cloud.md §3 "Per-API lists").
 */

const ALLOWED = [
  'LoadBalancerIds', 'LoadBalancerType', 'Forward', 'LoadBalancerName', 'LoadBalancerVips', 'Offset', 'Limit',
  'OrderBy', 'OrderType', 'SearchKey', 'VpcId', 'ProjectId', 'Filters', 'AdditionalFields',
];
const ORDER_BY = ['LoadBalancerName', 'CreateTime', 'Domain', 'LoadBalancerType'] as const;

type Predicate = (lb: LoadBalancerRecord) => boolean;

function tagFilters(params: Params): Predicate[] {
  const filters = optArray(params, 'Filters', 10) ?? [];
  return filters.map((f, i): Predicate => {
    if (!isRecord(f)) throw new ApiError('InvalidParameter.FormatError', `Filters.${i} must be an object.`);
    const name = f['Name'];
    const values = optStringArray(f, 'Values', 100, `Filters.${i}.Values`) ?? [];
    if (typeof name !== 'string') throw new ApiError('MissingParameter', `The request is missing a required parameter \`Filters.${i}.Name\`.`);
    if (name === 'tag-key') return (lb) => lb.Tags.some((t) => values.includes(t.TagKey));
    if (name.startsWith('tag:')) {
      const key = name.slice(4);
      return (lb) => lb.Tags.some((t) => t.TagKey === key && values.includes(t.TagValue));
    }
    // CLB's documented code for a bad Filter (tencentcloud-sdk-go clb/v20180317/errors.go, "Filter参数输入错误").
    throw new ApiError('InvalidParameterValue.InvalidFilter', `Filter \`${name}\` is invalid (the emulator models tag-key and tag:<key>).`);
  });
}

export const describeLoadBalancers: ActionDefinition = {
  async: false,
  run(ctx, params) {
    allowOnly(params, ALLOWED);
    const ids = optStringArray(params, 'LoadBalancerIds', 20);
    const type = optEnum(params, 'LoadBalancerType', ['OPEN', 'INTERNAL']);
    const forward = optInt(params, 'Forward');
    const name = optString(params, 'LoadBalancerName');
    const vips = optStringArray(params, 'LoadBalancerVips', 100);
    const offset = optIntInRange(params, 'Offset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const limit = optIntInRange(params, 'Limit', 1, 100) ?? 20;
    const orderBy = optEnum(params, 'OrderBy', ORDER_BY) ?? 'CreateTime';
    const orderType = optSwitch(params, 'OrderType') ?? 1;
    const searchKey = optString(params, 'SearchKey');
    const vpcId = optString(params, 'VpcId');
    const projectId = optInt(params, 'ProjectId');
    const additional = optStringArray(params, 'AdditionalFields', 10) ?? [];

    const predicates: Predicate[] = [...tagFilters(params)];
    if (ids) predicates.push((lb) => ids.includes(lb.LoadBalancerId));
    if (type) predicates.push((lb) => lb.LoadBalancerType === type);
    if (forward !== undefined) predicates.push((lb) => lb.Forward === forward);
    if (name) predicates.push((lb) => lb.LoadBalancerName.includes(name));
    if (vips) predicates.push((lb) => lb.LoadBalancerVips.some((v) => vips.includes(v)) || (lb.AddressIPv6 !== null && vips.includes(lb.AddressIPv6)));
    if (vpcId) predicates.push((lb) => lb.VpcId === vpcId);
    if (projectId !== undefined) predicates.push(() => projectId === 0);
    if (searchKey) {
      predicates.push((lb) =>
        [lb.LoadBalancerId, lb.LoadBalancerName, ...lb.LoadBalancerVips, lb.AddressIPv6 ?? ''].some((s) => s.includes(searchKey)),
      );
    }

    const sortKey = (lb: LoadBalancerRecord): string | number =>
      orderBy === 'LoadBalancerName' ? lb.LoadBalancerName : orderBy === 'LoadBalancerType' ? lb.LoadBalancerType : orderBy === 'Domain' ? '' : lb.seq;
    const matched = ctx.core.store
      .all()
      .filter((lb) => predicates.every((p) => p(lb)))
      .sort((a, b) => {
        const ka = sortKey(a);
        const kb = sortKey(b);
        const cmp = ka < kb ? -1 : ka > kb ? 1 : a.seq - b.seq;
        return orderType === 1 ? -cmp : cmp;
      });
    const page = matched.slice(offset, offset + limit).map((lb) => {
      const out = renderLoadBalancer(lb);
      if (additional.includes('TargetCount')) out['TargetCount'] = lb.nodes.length * lb.Listeners.length;
      return out;
    });
    return { TotalCount: matched.length, LoadBalancerSet: page };
  },
};
