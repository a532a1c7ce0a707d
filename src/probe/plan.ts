// The probe plan as the agent accepts it: parsed and checked before anything is sent. A plan that cannot be read
// at all is refused whole (the agent keeps running the last good one, so nothing is lost); a target that breaks a
// rule is refused alone, with its reason, and the rest run. The address rule is the agent's own safety line, not
// the operator's: whatever the plan says, only private IPv4 addresses (where TKE puts private CLB VIPs) are probed.
import type { ProbePlan, ProbeProtocol, ProbeTarget } from '../api/probe.js';

export interface Cidr {
  text: string;
  base: number;
  bits: number;
}

/** RFC 1918: a Tencent Cloud VPC's CIDR must lie in one of these, so a private CLB's VIP does (docs/probe.md). */
export const PRIVATE_RANGES: readonly string[] = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'];
/** The only range `--allow-cidr` may add: loopback, which never leaves the node (tests and the lab listen there). */
export const LOOPBACK_RANGE = '127.0.0.0/8';

export const MAX_TARGETS = 3000;
export const WINDOW_SECONDS = { min: 60, max: 3600 } as const;
export const TIMEOUT_MS = { min: 100, max: 30_000 } as const;
const PROTOCOLS: readonly ProbeProtocol[] = ['TCP', 'HTTP', 'HTTPS'];
/** A DNS name (what an Ingress rule's host is): letters, digits, '-', '.'; nothing that could end a header line. */
const HOST = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
/** An absolute path of visible ASCII (no space, no control character): it goes on the request line as is. */
const PATH = /^\/[\x21-\x7e]{0,1023}$/;
const ID_MAX = 512;

/** A dotted quad, each part 0-255 without leading zeros; undefined otherwise. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

export function parseCidr(text: string): Cidr | undefined {
  const [addr, len, extra] = text.split('/');
  if (addr === undefined || len === undefined || extra !== undefined || !/^[0-9]{1,2}$/.test(len)) return undefined;
  const base = parseIPv4(addr);
  const bits = Number(len);
  if (base === undefined || bits > 32) return undefined;
  if (bits < 32 && base % 2 ** (32 - bits) !== 0) return undefined; // host bits set: a typo more likely than an intent
  return { text, base, bits };
}

export function inCidr(address: number, cidr: Cidr): boolean {
  const size = 2 ** (32 - cidr.bits);
  return address >= cidr.base && address < cidr.base + size;
}

/**
 * The ranges the agent probes: RFC 1918, plus ranges `--allow-cidr` names, each of which must lie inside loopback
 * (127.0.0.0/8) or RFC 1918 itself: no flag can point the agent at a public address.
 */
export function allowedRanges(extra: readonly string[]): { ranges: Cidr[] } | { error: string } {
  const ranges = PRIVATE_RANGES.map((r) => parseCidr(r)!);
  const bounds = [...ranges, parseCidr(LOOPBACK_RANGE)!];
  for (const text of extra) {
    const c = parseCidr(text);
    if (!c) return { error: `--allow-cidr ${JSON.stringify(text)} is not an IPv4 CIDR such as 127.0.0.0/8` };
    const last = c.base + 2 ** (32 - c.bits) - 1;
    if (!bounds.some((b) => inCidr(c.base, b) && inCidr(last, b))) {
      return { error: `--allow-cidr ${text} is outside ${LOOPBACK_RANGE} and RFC 1918: the probe never sends to a public address` };
    }
    ranges.push(c);
  }
  return { ranges };
}

export interface RefusedTarget {
  id: string;
  reason: string;
}

export type PlanParse = { ok: true; plan: ProbePlan; refused: RefusedTarget[] } | { ok: false; error: string };

export interface PlanRules {
  ranges: readonly Cidr[];
  /** The smallest window accepted (WINDOW_SECONDS.min unless the agent's --min-window-seconds lowers it, for tests). */
  minWindowSeconds?: number;
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why one target cannot run, or undefined when it can. */
function targetProblem(t: Record<string, unknown>, rules: PlanRules): string | undefined {
  if (typeof t['vip'] !== 'string') return 'vip: expected a string';
  const address = parseIPv4(t['vip']);
  if (address === undefined) return `vip ${JSON.stringify(t['vip'])} is not an IPv4 address`;
  if (!rules.ranges.some((r) => inCidr(address, r))) {
    return `vip ${t['vip']} is not a private IPv4 address (${rules.ranges.map((r) => r.text).join(', ')}): the probe sends only to private CLB VIPs`;
  }
  if (!isInt(t['port'], 1, 65535)) return 'port: expected a whole number from 1 to 65535';
  const protocol = t['protocol'];
  if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol as ProbeProtocol)) return `protocol: expected one of ${PROTOCOLS.join(', ')}`;
  if (protocol === 'TCP') {
    if (t['host'] !== undefined || t['path'] !== undefined) return 'host and path are for HTTP and HTTPS targets, not TCP';
  } else {
    if (t['host'] !== undefined && (typeof t['host'] !== 'string' || !HOST.test(t['host']))) return 'host: expected a DNS name such as www.example.com';
    if (t['path'] !== undefined && (typeof t['path'] !== 'string' || !PATH.test(t['path']))) return 'path: expected an absolute path of visible ASCII characters, at most 1024';
  }
  if (t['timeoutMs'] !== undefined && !isInt(t['timeoutMs'], TIMEOUT_MS.min, TIMEOUT_MS.max)) return `timeoutMs: expected a whole number from ${TIMEOUT_MS.min} to ${TIMEOUT_MS.max}`;
  const known = new Set(['id', 'vip', 'port', 'protocol', 'host', 'path', 'timeoutMs']);
  const unknown = Object.keys(t).filter((k) => !known.has(k));
  if (unknown.length > 0) return `unknown field ${unknown.join(', ')}`;
  return undefined;
}

export function parsePlan(text: string, rules: PlanRules): PlanParse {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not JSON: ${(err as Error).message}` };
  }
  if (!isObject(raw)) return { ok: false, error: 'expected a JSON object' };
  if (raw['version'] !== 1) return { ok: false, error: `version ${JSON.stringify(raw['version'])}: this agent reads version 1` };
  const minWindow = rules.minWindowSeconds ?? WINDOW_SECONDS.min;
  if (!isInt(raw['windowSeconds'], minWindow, WINDOW_SECONDS.max)) return { ok: false, error: `windowSeconds: expected a whole number from ${minWindow} to ${WINDOW_SECONDS.max}` };
  if (!isInt(raw['timeoutMs'], TIMEOUT_MS.min, TIMEOUT_MS.max)) return { ok: false, error: `timeoutMs: expected a whole number from ${TIMEOUT_MS.min} to ${TIMEOUT_MS.max}` };
  const list = raw['targets'];
  if (!Array.isArray(list)) return { ok: false, error: 'targets: expected a list' };
  if (list.length > MAX_TARGETS) return { ok: false, error: `targets: ${list.length} is more than ${MAX_TARGETS} (docs/probe.md "Sizes")` };
  const targets: ProbeTarget[] = [];
  const refused: RefusedTarget[] = [];
  const seen = new Set<string>();
  list.forEach((item: unknown, i) => {
    const id = isObject(item) && typeof item['id'] === 'string' && item['id'].length > 0 && item['id'].length <= ID_MAX ? item['id'] : undefined;
    if (!isObject(item) || id === undefined) {
      refused.push({ id: `targets[${i}]`, reason: `id: expected a string of 1 to ${ID_MAX} characters` });
      return;
    }
    if (seen.has(id)) {
      refused.push({ id, reason: 'a second target with this id' });
      return;
    }
    seen.add(id);
    const problem = targetProblem(item, rules);
    if (problem) {
      refused.push({ id, reason: problem });
      return;
    }
    const t: ProbeTarget = { id, vip: item['vip'] as string, port: item['port'] as number, protocol: item['protocol'] as ProbeProtocol };
    if (item['host'] !== undefined) t.host = item['host'] as string;
    if (item['path'] !== undefined) t.path = item['path'] as string;
    if (item['timeoutMs'] !== undefined) t.timeoutMs = item['timeoutMs'] as number;
    targets.push(t);
  });
  return { ok: true, plan: { version: 1, windowSeconds: raw['windowSeconds'], timeoutMs: raw['timeoutMs'], targets }, refused };
}
