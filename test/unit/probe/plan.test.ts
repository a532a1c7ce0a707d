import { describe, expect, it } from '@jest/globals';
import { allowedRanges, parseCidr, parsePlan, PRIVATE_RANGES, type Cidr } from '../../../src/probe/plan.js';

const rfc1918 = PRIVATE_RANGES.map((r) => parseCidr(r)!) as Cidr[];
const plan = (targets: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ version: 1, windowSeconds: 300, timeoutMs: 5000, targets, ...extra });
const tcp = (vip: string, id = 't') => ({ id, vip, port: 80, protocol: 'TCP' });

describe('the addresses a plan may name', () => {
  it.each([
    ['10.0.0.5', true],
    ['10.255.255.255', true],
    ['172.16.0.1', true],
    ['172.31.255.254', true],
    ['172.32.0.1', false],
    ['172.15.255.255', false],
    ['192.168.1.1', true],
    ['192.169.0.1', false],
    ['100.64.0.1', false], // the CLB's health-check source range, not a VIP range
    ['100.127.0.1', false],
    ['127.0.0.1', false], // only with --allow-cidr
    ['8.8.8.8', false],
    ['169.254.169.254', false], // the metadata service
    ['0.0.0.0', false],
    ['255.255.255.255', false],
  ])('%s: probed = %s', (vip, probed) => {
    const r = parsePlan(plan([tcp(vip)]), { ranges: rfc1918 });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.targets.length).toBe(probed ? 1 : 0);
    if (!probed) expect(r.refused).toEqual([{ id: 't', reason: `vip ${vip} is not a private IPv4 address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16): the probe sends only to private CLB VIPs` }]);
  });

  it.each(['10.0.0', '10.0.0.256', '010.0.0.1', '10.0.0.1 ', 'fd00::1', 'clb.example.com', '10.0.0.1:80'])('%j is not an IPv4 address', (vip) => {
    const r = parsePlan(plan([tcp(vip)]), { ranges: rfc1918 });
    expect(r.ok && r.refused[0]!.reason).toBe(`vip ${JSON.stringify(vip)} is not an IPv4 address`);
  });

  it.each([
    [['127.0.0.0/8'], undefined],
    [['127.0.0.1/32'], undefined],
    [['10.1.0.0/16'], undefined],
    [['0.0.0.0/0'], '--allow-cidr 0.0.0.0/0 is outside 127.0.0.0/8 and RFC 1918: the probe never sends to a public address'],
    [['100.64.0.0/10'], '--allow-cidr 100.64.0.0/10 is outside 127.0.0.0/8 and RFC 1918: the probe never sends to a public address'],
    [['10.0.0.0/7'], '--allow-cidr 10.0.0.0/7 is outside 127.0.0.0/8 and RFC 1918: the probe never sends to a public address'],
    [['126.0.0.0/7'], '--allow-cidr 126.0.0.0/7 is outside 127.0.0.0/8 and RFC 1918: the probe never sends to a public address'],
    [['127.0.0.1/8'], '--allow-cidr "127.0.0.1/8" is not an IPv4 CIDR such as 127.0.0.0/8'],
    [['127.0.0.0'], '--allow-cidr "127.0.0.0" is not an IPv4 CIDR such as 127.0.0.0/8'],
  ])('--allow-cidr %j: error %j', (extra, error) => {
    const r = allowedRanges(extra);
    expect('error' in r ? r.error : undefined).toBe(error);
    if (!('error' in r)) expect(parsePlan(plan([tcp('127.0.0.1')]), { ranges: r.ranges }).ok && true).toBe(true);
  });

  it('--allow-cidr 127.0.0.0/8 lets a loopback VIP through', () => {
    const r = allowedRanges(['127.0.0.0/8']);
    if ('error' in r) throw new Error(r.error);
    const p = parsePlan(plan([tcp('127.0.0.1')]), { ranges: r.ranges });
    expect(p.ok && p.plan.targets.map((t) => t.vip)).toEqual(['127.0.0.1']);
  });
});

describe('a plan', () => {
  it.each([
    ['{', /^not JSON: /],
    ['[]', /^expected a JSON object$/],
    [JSON.stringify({ version: 2 }), /^version 2: this agent reads version 1$/],
    [plan([], { windowSeconds: 30 }), /^windowSeconds: expected a whole number from 60 to 3600$/],
    [plan([], { windowSeconds: 60.5 }), /^windowSeconds: expected a whole number from 60 to 3600$/],
    [plan([], { timeoutMs: 50 }), /^timeoutMs: expected a whole number from 100 to 30000$/],
    [plan([], { targets: {} }), /^targets: expected a list$/],
    [plan(Array.from({ length: 3001 }, (_, i) => tcp('10.0.0.1', `t${i}`))), /^targets: 3001 is more than 3000/],
  ])('%s is refused whole: %s', (text, error) => {
    const r = parsePlan(text, { ranges: rfc1918 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(error);
  });

  it('accepts a shorter window when the agent lowers the floor (tests)', () => {
    expect(parsePlan(plan([], { windowSeconds: 2 }), { ranges: rfc1918, minWindowSeconds: 1 }).ok).toBe(true);
  });

  it('refuses a bad target alone, with its reason, and keeps the others in order', () => {
    const r = parsePlan(
      plan([
        tcp('10.0.0.1', 'a'),
        { id: 'b', vip: '10.0.0.2', port: 0, protocol: 'TCP' },
        { id: 'c', vip: '10.0.0.3', port: 443, protocol: 'HTTPS', host: 'www.example.com', path: '/healthz', timeoutMs: 2000 },
        { id: 'd', vip: '10.0.0.4', port: 80, protocol: 'UDP' },
        { id: 'e', vip: '10.0.0.5', port: 80, protocol: 'TCP', path: '/' },
        { id: 'f', vip: '10.0.0.6', port: 80, protocol: 'HTTP', host: 'a.example.com\r\nX-Evil: 1' },
        { id: 'g', vip: '10.0.0.7', port: 80, protocol: 'HTTP', path: '/a b' },
        { id: 'h', vip: '10.0.0.8', port: 80, protocol: 'HTTP', path: 'relative' },
        { id: 'i', vip: '10.0.0.9', port: 80, protocol: 'TCP', timeoutMs: 60_000 },
        { id: 'j', vip: '10.0.0.10', port: 80, protocol: 'TCP', extra: 1 },
        tcp('10.0.0.11', 'a'),
        { vip: '10.0.0.12', port: 80, protocol: 'TCP' },
        'nonsense',
        { id: 'k', vip: '10.0.0.13', port: 8080, protocol: 'HTTP' },
      ]),
      { ranges: rfc1918 },
    );
    if (!r.ok) throw new Error(r.error);
    expect(r.plan.targets).toEqual([
      { id: 'a', vip: '10.0.0.1', port: 80, protocol: 'TCP' },
      { id: 'c', vip: '10.0.0.3', port: 443, protocol: 'HTTPS', host: 'www.example.com', path: '/healthz', timeoutMs: 2000 },
      { id: 'k', vip: '10.0.0.13', port: 8080, protocol: 'HTTP' },
    ]);
    expect(r.refused).toEqual([
      { id: 'b', reason: 'port: expected a whole number from 1 to 65535' },
      { id: 'd', reason: 'protocol: expected one of TCP, HTTP, HTTPS' },
      { id: 'e', reason: 'host and path are for HTTP and HTTPS targets, not TCP' },
      { id: 'f', reason: 'host: expected a DNS name such as www.example.com' },
      { id: 'g', reason: 'path: expected an absolute path of visible ASCII characters, at most 1024' },
      { id: 'h', reason: 'path: expected an absolute path of visible ASCII characters, at most 1024' },
      { id: 'i', reason: 'timeoutMs: expected a whole number from 100 to 30000' },
      { id: 'j', reason: 'unknown field extra' },
      { id: 'a', reason: 'a second target with this id' },
      { id: 'targets[11]', reason: 'id: expected a string of 1 to 512 characters' },
      { id: 'targets[12]', reason: 'id: expected a string of 1 to 512 characters' },
    ]);
  });
});
