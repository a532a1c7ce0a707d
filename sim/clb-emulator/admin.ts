import type {
  AdminLoadBalancer, AdminState, CapabilitiesPatch, EmulatorConfig, ListenerPatch, RulePatch, SeedLoadBalancer,
  VipBoundRequest,
} from './admin-types.js';
import type { Capabilities } from './capabilities.js';
import { ACCOUNT_PROFILES, incoherentCapabilities, isAccountProfile } from './capabilities.js';
import type { EmulatorCore } from './emulator.js';
import { validateFaultPlan } from './faults.js';
import { healthCheckChanged } from './health-check.js';
import type { LoadBalancerRecord } from './model.js';
import { isLayer7 } from './model.js';
import { isRecord } from './params.js';
import { AdminError, healthCheckFrom, nodesFrom, seedLoadBalancer } from './seed.js';

/**
 * The admin API under `/_admin/` (unsigned JSON; safe only because the server binds 127.0.0.1). It lets tests and
 * the TKE simulator set up worlds, play the console user (drift) and the node (VIP bound), tune timing and
 * limits, inject faults and read counters. Endpoint list: sim/README.md.
 */

export interface AdminResponse {
  status: number;
  body: unknown;
}

type Handler = (core: EmulatorCore, match: string[], body: unknown) => unknown;

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

const ID = '([A-Za-z0-9_-]+)';

function view(core: EmulatorCore, lb: LoadBalancerRecord): AdminLoadBalancer {
  return { ...structuredClone(lb), lockedByTask: core.tasks.runningOn(lb.LoadBalancerId)?.taskId ?? null };
}

function lbOr404(core: EmulatorCore, id: string | undefined): LoadBalancerRecord {
  const lb = id === undefined ? undefined : core.store.find(id);
  if (!lb) throw new AdminError(404, `load balancer ${id ?? ''} not found`);
  return lb;
}

function listenerOr404(lb: LoadBalancerRecord, id: string | undefined) {
  const l = lb.Listeners.find((x) => x.ListenerId === id);
  if (!l) throw new AdminError(404, `listener ${id ?? ''} not found on ${lb.LoadBalancerId}`);
  return l;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new AdminError(400, 'body must be a JSON object');
  return body;
}

function patchCapabilities(core: EmulatorCore, body: unknown): Capabilities {
  const patch = objectBody(body) as CapabilitiesPatch;
  const next: Capabilities = { ...core.capabilities };
  for (const [key, value] of Object.entries(patch)) {
    if (!(key in next)) throw new AdminError(400, `unknown capability ${key}`);
    if (key === 'account') {
      if (!isAccountProfile(value)) throw new AdminError(400, `account must be one of ${ACCOUNT_PROFILES.join(', ')}`);
      next.account = value;
      continue;
    }
    if (typeof value !== 'boolean') throw new AdminError(400, `capability ${key} must be a boolean`);
    next[key as 'healthCheckSource100_64' | 'l7KeepaliveSnat'] = value;
  }
  // Checked on the result, so one PUT can move an account and its capability together in either direction.
  const incoherent = incoherentCapabilities(next);
  if (incoherent) throw new AdminError(400, incoherent);
  core.capabilities = next;
  return next;
}

function patchConfig(core: EmulatorCore, body: unknown): EmulatorConfig {
  const patch = objectBody(body) as Partial<EmulatorConfig>;
  for (const key of Object.keys(patch)) {
    if (!['taskDurationMs', 'rps', 'rpsPerAction', 'healthConvergenceMs'].includes(key)) throw new AdminError(400, `unknown config key ${key}`);
  }
  const nonNegative = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  for (const key of ['taskDurationMs', 'rps', 'healthConvergenceMs'] as const) {
    if (patch[key] !== undefined && !nonNegative(patch[key])) throw new AdminError(400, `${key} must be a non-negative number`);
  }
  if (patch.rpsPerAction !== undefined && (!isRecord(patch.rpsPerAction) || !Object.values(patch.rpsPerAction).every(nonNegative))) {
    throw new AdminError(400, 'rpsPerAction must map action names to non-negative numbers');
  }
  return core.setConfig(patch);
}

function patchListener(core: EmulatorCore, lbId: string | undefined, listenerId: string | undefined, body: unknown): AdminLoadBalancer {
  const lb = lbOr404(core, lbId);
  const listener = listenerOr404(lb, listenerId);
  const patch = objectBody(body) as ListenerPatch;
  const l7 = isLayer7(listener.Protocol);
  if (patch.HealthCheck !== undefined) {
    if (l7 || !listener.HealthCheck) throw new AdminError(400, 'layer-7 listeners have per-rule health checks; patch the rule');
    const ctx = { protocol: listener.Protocol, ipv6: lb.AddressIPVersion === 'ipv6' };
    const next = healthCheckFrom(patch.HealthCheck, ctx, listener.HealthCheck, 'HealthCheck', lb.LoadBalancerId);
    if (healthCheckChanged(listener.HealthCheck, next)) listener.healthChangedAtMs = Date.now();
    listener.HealthCheck = next;
  }
  if (patch.KeepaliveEnable !== undefined) {
    if (!l7 || (patch.KeepaliveEnable !== 0 && patch.KeepaliveEnable !== 1)) throw new AdminError(400, 'KeepaliveEnable must be 0/1 on an HTTP/HTTPS listener');
    listener.KeepaliveEnable = patch.KeepaliveEnable;
  }
  if (patch.SnatEnable !== undefined) {
    if (typeof patch.SnatEnable !== 'boolean') throw new AdminError(400, 'SnatEnable must be a boolean');
    listener.SnatEnable = patch.SnatEnable;
  }
  if (patch.ListenerName !== undefined) {
    if (typeof patch.ListenerName !== 'string') throw new AdminError(400, 'ListenerName must be a string');
    listener.ListenerName = patch.ListenerName;
  }
  return view(core, lb);
}

function patchRule(core: EmulatorCore, m: string[], body: unknown): AdminLoadBalancer {
  const lb = lbOr404(core, m[0]);
  const listener = listenerOr404(lb, m[1]);
  const rule = listener.Rules.find((r) => r.LocationId === m[2]);
  if (!rule) throw new AdminError(404, `rule ${m[2] ?? ''} not found on ${listener.ListenerId}`);
  const patch = objectBody(body) as RulePatch;
  if (patch.HealthCheck !== undefined) {
    const ctx = { protocol: listener.Protocol, forwardType: rule.ForwardType, ipv6: lb.AddressIPVersion === 'ipv6' };
    const next = healthCheckFrom(patch.HealthCheck, ctx, rule.HealthCheck, 'HealthCheck', lb.LoadBalancerId);
    if (healthCheckChanged(rule.HealthCheck, next)) rule.healthChangedAtMs = Date.now();
    rule.HealthCheck = next;
  }
  if (patch.Url !== undefined) {
    if (typeof patch.Url !== 'string' || !patch.Url.startsWith('/')) throw new AdminError(400, 'Url must start with "/"');
    rule.Url = patch.Url;
  }
  if (patch.Domain !== undefined) {
    if (typeof patch.Domain !== 'string' || patch.Domain === '') throw new AdminError(400, 'Domain must be a non-empty string');
    rule.Domain = patch.Domain;
  }
  return view(core, lb);
}

function setVipBound(core: EmulatorCore, lbId: string | undefined, body: unknown): AdminLoadBalancer {
  const lb = lbOr404(core, lbId);
  const req = objectBody(body) as Partial<VipBoundRequest>;
  if (typeof req.bound !== 'boolean') throw new AdminError(400, 'bound must be a boolean');
  const ips = req.nodes ?? lb.nodes.map((n) => n.ip);
  if (!Array.isArray(ips)) throw new AdminError(400, 'nodes must be an array of node IPs');
  for (const ip of ips) {
    const node = lb.nodes.find((n) => n.ip === ip);
    if (!node) throw new AdminError(400, `node ${String(ip)} is not a target of ${lb.LoadBalancerId}`);
    node.vipBound = req.bound;
  }
  return view(core, lb);
}

const ROUTES: Route[] = [
  { method: 'POST', pattern: /^\/_admin\/reset$/, handler: (core) => {
    core.reset();
    return { ok: true };
  } },
  {
    method: 'GET',
    pattern: /^\/_admin\/state$/,
    handler: (core): AdminState => ({
      region: core.options.region,
      loadBalancers: core.store.all().sort((a, b) => a.seq - b.seq).map((lb) => view(core, lb)),
      tasks: core.tasks.list(),
    }),
  },
  { method: 'POST', pattern: /^\/_admin\/loadbalancers$/, handler: (core, _m, body) => view(core, seedLoadBalancer(core, body as SeedLoadBalancer)) },
  { method: 'GET', pattern: new RegExp(`^/_admin/loadbalancers/${ID}$`), handler: (core, m) => view(core, lbOr404(core, m[0])) },
  {
    method: 'DELETE',
    pattern: new RegExp(`^/_admin/loadbalancers/${ID}$`),
    handler: (core, m) => {
      core.store.remove(lbOr404(core, m[0]).LoadBalancerId);
      return { ok: true };
    },
  },
  { method: 'PUT', pattern: new RegExp(`^/_admin/loadbalancers/${ID}/vip-bound$`), handler: (core, m, body) => setVipBound(core, m[0], body) },
  {
    method: 'PUT',
    pattern: new RegExp(`^/_admin/loadbalancers/${ID}/nodes$`),
    handler: (core, m, body) => {
      const lb = lbOr404(core, m[0]);
      lb.nodes = nodesFrom(objectBody(body)['nodes']);
      return view(core, lb);
    },
  },
  {
    method: 'PATCH',
    pattern: new RegExp(`^/_admin/loadbalancers/${ID}/listeners/${ID}$`),
    handler: (core, m, body) => patchListener(core, m[0], m[1], body),
  },
  {
    method: 'PATCH',
    pattern: new RegExp(`^/_admin/loadbalancers/${ID}/listeners/${ID}/rules/${ID}$`),
    handler: (core, m, body) => patchRule(core, m, body),
  },
  { method: 'GET', pattern: /^\/_admin\/capabilities$/, handler: (core) => core.capabilities },
  { method: 'PUT', pattern: /^\/_admin\/capabilities$/, handler: (core, _m, body) => patchCapabilities(core, body) },
  { method: 'GET', pattern: /^\/_admin\/config$/, handler: (core) => core.config },
  { method: 'PUT', pattern: /^\/_admin\/config$/, handler: (core, _m, body) => patchConfig(core, body) },
  { method: 'GET', pattern: /^\/_admin\/faults$/, handler: (core) => core.faults.get() },
  {
    method: 'PUT',
    pattern: /^\/_admin\/faults$/,
    handler: (core, _m, body) => {
      try {
        core.faults.set(validateFaultPlan(body));
      } catch (err) {
        throw new AdminError(400, err instanceof Error ? err.message : String(err));
      }
      return core.faults.get();
    },
  },
  { method: 'DELETE', pattern: /^\/_admin\/faults$/, handler: (core) => {
    core.faults.clear();
    return { ok: true };
  } },
  { method: 'GET', pattern: /^\/_admin\/stats$/, handler: (core) => core.stats.snapshot() },
  { method: 'POST', pattern: /^\/_admin\/stats\/reset$/, handler: (core) => {
    core.stats.reset();
    core.writeLog.clear();
    return { ok: true };
  } },
  // Marks freeze the counters at the moment the request arrives (the event loop makes that exact), so a benchmark
  // can measure one phase without resetting counters other observers rely on.
  { method: 'PUT', pattern: new RegExp(`^/_admin/stats/marks/${ID}$`), handler: (core, m) => core.stats.mark(m[0] ?? '') },
  {
    method: 'GET',
    pattern: new RegExp(`^/_admin/stats/since/${ID}$`),
    handler: (core, m) => {
      const since = core.stats.since(m[0] ?? '');
      if (!since) throw new AdminError(404, `no stats mark ${m[0] ?? ''} (marks are forgotten on reset)`);
      return since;
    },
  },
  // The write log (write-log.ts): who wrote which listener or rule, in order, and what each write changed.
  { method: 'GET', pattern: /^\/_admin\/writes$/, handler: (core) => core.writeLog.list() },
  { method: 'GET', pattern: /^\/_admin\/writes\/since\/(\d+)$/, handler: (core, m) => core.writeLog.list(Number(m[0])) },
  { method: 'GET', pattern: /^\/_admin\/callers$/, handler: (core) => core.options.callers.map(({ caller, secretId }) => ({ caller, secretId })) },
  { method: 'GET', pattern: /^\/_admin\/tasks$/, handler: (core) => core.tasks.list() },
  { method: 'POST', pattern: /^\/_admin\/tasks\/complete$/, handler: (core) => ({ completed: core.tasks.completeAll() }) },
];

export function handleAdminRequest(core: EmulatorCore, method: string, path: string, rawBody: Buffer): AdminResponse {
  let body: unknown;
  if (rawBody.length > 0) {
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return { status: 400, body: { error: 'body is not valid JSON' } };
    }
  }
  let pathMatched = false;
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    try {
      core.tasks.settleDue();
      return { status: 200, body: route.handler(core, m.slice(1), body) };
    } catch (err) {
      if (err instanceof AdminError) return { status: err.status, body: { error: err.message } };
      throw err;
    }
  }
  return pathMatched
    ? { status: 405, body: { error: `${method} not allowed on ${path}` } }
    : { status: 404, body: { error: `no admin route ${path}` } };
}
