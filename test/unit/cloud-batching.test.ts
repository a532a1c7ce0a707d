import { describe, expect, it } from '@jest/globals';
import { batches, MAX_LOAD_BALANCER_IDS, MAX_TARGET_HEALTH_IDS, paginate } from '../../src/cloud/batching.js';
import { withSourceIpType } from '../../src/cloud/clb-client.js';
import { cleanHealthCheck, toListenerInfo, toLoadBalancerHealthInfo, toLoadBalancerInfo, writableHealthCheck } from '../../src/cloud/clb-mapping.js';

const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `lb-${i}`);

describe('batching', () => {
  it('splits DescribeLoadBalancers ids by 20 and DescribeTargetHealth ids by 30', () => {
    expect(batches(ids(45), MAX_LOAD_BALANCER_IDS).map((b) => b.length)).toEqual([20, 20, 5]);
    expect(batches(ids(61), MAX_TARGET_HEALTH_IDS).map((b) => b.length)).toEqual([30, 30, 1]);
    expect(batches(ids(20), 20)).toHaveLength(1);
    expect(batches([], 20)).toEqual([]);
  });

  it('drops duplicates and empty ids, keeping first-seen order', () => {
    expect(batches(['a', 'b', 'a', '', 'c'], 2)).toEqual([['a', 'b'], ['c']]);
  });

  it('rejects a batch size below 1', () => {
    expect(() => batches(['a'], 0)).toThrow(TypeError);
  });
});

describe('paginate', () => {
  const data = ids(250);
  const pageOf = (offset: number, limit: number) => Promise.resolve({ items: data.slice(offset, offset + limit), total: data.length });

  it('collects every page with Limit ≤ 100', async () => {
    const offsets: Array<[number, number]> = [];
    const all = await paginate((offset, limit) => {
      offsets.push([offset, limit]);
      return pageOf(offset, limit);
    });
    expect(all).toEqual(data);
    expect(offsets).toEqual([
      [0, 100],
      [100, 100],
      [200, 100],
    ]);
  });

  it('stops on an empty page even if TotalCount says more (a CLB deleted while paging)', async () => {
    let calls = 0;
    const all = await paginate(() => {
      calls++;
      return Promise.resolve({ items: calls === 1 ? ['a'] : [], total: 5 });
    });
    expect(all).toEqual(['a']);
    expect(calls).toBe(2);
  });

  it('is bounded by maxPages', async () => {
    let calls = 0;
    await paginate(() => {
      calls++;
      return Promise.resolve({ items: ['x'], total: Number.MAX_SAFE_INTEGER });
    }, 1, 5);
    expect(calls).toBe(5);
  });
});

describe('mapping SDK shapes', () => {
  it('keeps the full HealthCheck except nulls, for a round-trip write', () => {
    const hc = { HealthSwitch: 1, TimeOut: 2, IntervalTime: 7, HttpCode: 31, HttpCheckPath: null, CheckType: 'TCP', SourceIpType: 0, ExtendedCode: null };
    const clean = cleanHealthCheck(hc as never);
    expect(clean).toEqual({ HealthSwitch: 1, TimeOut: 2, IntervalTime: 7, HttpCode: 31, CheckType: 'TCP', SourceIpType: 0 });
    expect(withSourceIpType(clean ?? {}, 1)).toEqual({ ...clean, SourceIpType: 1 });
    expect(cleanHealthCheck(null)).toBeUndefined();
  });

  it.each([
    ['TCP', false],
    ['PING', false],
    ['custom', false],
    ['HTTP', true],
    ['HTTPS', true],
    ['GRPC', true],
  ])('writes back a %s check with its HTTP-only fields kept: %s', (checkType, kept) => {
    const http = { HttpCode: 31, HttpCheckPath: '/', HttpCheckDomain: 'a', HttpCheckMethod: 'HEAD', HttpVersion: 'HTTP/1.1' };
    const hc = { HealthSwitch: 1, CheckType: checkType, SourceIpType: 0, ContextType: null, ...http };
    expect(writableHealthCheck(hc as never)).toEqual({ HealthSwitch: 1, CheckType: checkType, SourceIpType: 0, ...(kept ? http : {}) });
  });

  it('writes back a struct without CheckType as read, minus nulls', () => {
    expect(writableHealthCheck({ HealthSwitch: 1, HttpCode: 31, CheckPort: null } as never)).toEqual({ HealthSwitch: 1, HttpCode: 31 });
    expect(writableHealthCheck(undefined)).toEqual({});
  });

  it('maps load balancers, IPv6 whatever the casing', () => {
    const lb = toLoadBalancerInfo({
      LoadBalancerId: 'lb-1',
      LoadBalancerName: 'n',
      LoadBalancerType: 'INTERNAL',
      AddressIPVersion: 'ipv6',
      LoadBalancerVips: [],
      AddressIPv6: 'fd00::1',
      Status: 1,
      Forward: 1,
      Tags: [{ TagKey: 'k', TagValue: 'v' }],
      LoadBalancerPassToTarget: true,
    });
    expect(lb).toMatchObject({ loadBalancerId: 'lb-1', type: 'INTERNAL', ipVersion: 'IPv6', ipv6Address: 'fd00::1', tags: { k: 'v' }, passToTarget: true });
    expect(toLoadBalancerInfo({ LoadBalancerId: 'lb-2', AddressIPVersion: 'IPv6FullChain' }).ipVersion).toBe('IPv6');
    expect(toLoadBalancerInfo({ LoadBalancerId: 'lb-3' })).toMatchObject({ ipVersion: 'IPv4', vips: [], clusterIds: [], passToTarget: false });
  });

  it('maps L4 and L7 listeners', () => {
    const l4 = toListenerInfo({ ListenerId: 'lbl-1', Protocol: 'TCP', Port: 80, HealthCheck: { SourceIpType: 0, HttpCheckPath: null as never }, Rules: null as never });
    expect(l4).toEqual({ listenerId: 'lbl-1', name: '', protocol: 'TCP', port: 80, healthCheck: { SourceIpType: 0 }, rules: [] });
    const l7 = toListenerInfo({
      ListenerId: 'lbl-2',
      Protocol: 'HTTP',
      Port: 80,
      KeepaliveEnable: 1,
      HealthCheck: null as never,
      Rules: [{ LocationId: 'loc-1', Domain: 'a.example', Url: '/', HealthCheck: { SourceIpType: 1 } }],
    });
    expect(l7.healthCheck).toBeUndefined();
    expect(l7.keepaliveEnable).toBe(1);
    expect(l7.rules).toEqual([{ locationId: 'loc-1', domain: 'a.example', url: '/', healthCheck: { SourceIpType: 1 } }]);
  });

  it('maps target health, falling back to the deprecated misspelt field', () => {
    const h = toLoadBalancerHealthInfo({
      LoadBalancerId: 'lb-1',
      Listeners: [
        {
          ListenerId: 'lbl-1',
          Protocol: 'TCP',
          Port: 80,
          Rules: [
            {
              LocationId: 'lbl-1',
              Targets: [
                { IP: '10.0.0.1', Port: 30080, HealthStatus: true, HealthStatusDetail: 'Alive', Weight: 10 },
                { IP: '10.0.0.2', Port: 30080, HealthStatus: false, HealthStatusDetial: 'Dead' },
              ],
            },
          ],
        },
      ],
    });
    expect(h.listeners[0]?.rules[0]?.targets).toEqual([
      { ip: '10.0.0.1', port: 30080, healthy: true, status: 'Alive', weight: 10 },
      { ip: '10.0.0.2', port: 30080, healthy: false, status: 'Dead' },
    ]);
  });
});
